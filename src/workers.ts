/**
 * The background work of the service (contracts.md §1 "Scale-out"): booking evaluation (contracts.md
 * §6), webhook delivery (§7), the refresh of the directory's stored availability summaries
 * (docs/directory-format.md, "Performance notes") and, unless the API in this process already runs
 * it, the insurance-mapping job (contracts.md §4). Every loop claims its work with locks (row locks,
 * `FOR UPDATE SKIP LOCKED`; the summary refresh, an advisory lock per environment and batch), so it
 * may run in every API process, in dedicated `carebook worker` processes, or both, without doing
 * anything twice.
 */
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db, DatabaseHandle } from './db/database.js';
import { startTableMaintenance } from './db/table-maintenance.js';
import { loggableError } from './lib/loggable-error.js';
import { startEvaluator } from './domain/appointments/evaluator.js';
import { sandboxBookingOutcomes } from './domain/sandbox/booking-outcomes.js';
import { startAvailabilitySummaryWorker } from './domain/directory/availability-summary-refresh.js';
import { startInsuranceMappingWorker } from './domain/directory/insurance-mappings.js';
import { createWebhookWorker } from './webhooks/worker.js';

export interface BackgroundWorkers {
  stop(): Promise<void>;
}

/**
 * Starts the loops. `engine` tells the table-maintenance loop whether autovacuum can be relied on
 * (src/db/table-maintenance.ts). `insuranceMappings: false` when the app of this process runs that
 * job itself (`buildApp`'s `insuranceMappingJob`), so that one process does not run it twice.
 */
export function startBackgroundWorkers(
  db: Db,
  config: Config,
  logger: Logger,
  opts: { engine: DatabaseHandle['engine']; insuranceMappings?: boolean },
): BackgroundWorkers {
  // Error messages can carry values (a PostgreSQL error quotes the row): logged without them.
  const report = (what: string) => (err: unknown) => logger.error({ err: loggableError(err) }, `${what} pass failed`);
  const evaluator = startEvaluator(db, { intervalMs: config.workerPollMs, env: config.appEnv, onError: report('booking evaluator'), outcomes: sandboxBookingOutcomes });
  const webhooks = createWebhookWorker(db, {
    env: config.appEnv,
    allowPrivateTargets: config.allowPrivateWebhookTargets,
    baseDelayMs: config.webhookRetryBaseMs,
    pollMs: config.workerPollMs,
    onError: report('webhook worker'),
  });
  webhooks.start();
  const mappings = opts.insuranceMappings === false ? undefined : startInsuranceMappingWorker(db, config.appEnv, { onError: report('insurance mapping job') });
  // Default ages: rows recomputed past 40 s, served up to 60 s (availability-summary-refresh.ts).
  const summaries = startAvailabilitySummaryWorker(db, config.appEnv, { onError: report('availability summary refresh') });
  // Planner statistics and dead rows where no autovacuum runs (PGlite; PostgreSQL with autovacuum = off).
  const maintenance = startTableMaintenance(db, opts.engine, {
    onError: report('table maintenance'),
    onPass: (done) => {
      if (done.length) logger.debug({ tables: done.map((t) => `${t.vacuum ? 'vacuum' : 'analyze'} ${t.table}`) }, 'table maintenance');
    },
  });
  return {
    async stop() {
      await Promise.all([evaluator.stop(), webhooks.stop(), mappings?.stop(), summaries.stop(), maintenance.stop()]);
    },
  };
}
