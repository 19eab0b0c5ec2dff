/**
 * The booking evaluator job: each pass evaluates one batch of due appointments of this process's
 * environment (`runEvaluatorOnce`, src/domain/appointments/evaluator.ts) in one short transaction,
 * every `WORKER_POLL_MS`, at once again after a full batch (the loop yields to the event loop
 * between passes). A row whose evaluation fails is logged and set aside by the pass.
 */
import { runEvaluatorOnce } from '../domain/appointments/evaluator.js';
import { sandboxBookingOutcomes } from '../domain/sandbox/booking-outcomes.js';
import { LocalClock } from '../domain/scheduling/local-time.js';
import type { JobDeps } from './job-deps.js';
import type { Job } from './loop.js';

/**
 * Appointments claimed per pass, by engine (docs/performance.md, "The evaluator"). On PGlite a
 * transaction holds the one engine, and with it every request of the process, until it commits: 25
 * rows keep a pass's transaction to a few milliseconds. On PostgreSQL it holds only its rows' locks.
 */
export const EVALUATOR_BATCH: Record<JobDeps['engine'], number> = { pglite: 25, postgres: 100 };

/** The booking evaluator job of `deps.config.appEnv`. */
export function evaluatorJob({ db, config, engine }: JobDeps): Job {
  const batch = EVALUATOR_BATCH[engine];
  // Local-time conversions are deterministic: one memo for every pass of the job.
  const clock = new LocalClock();
  return {
    name: 'evaluator',
    title: 'booking evaluator',
    intervalMs: config.workerPollMs,
    batch,
    async pass(ctx) {
      const pass = await runEvaluatorOnce(db, {
        env: config.appEnv,
        limit: batch,
        onRowError: (err) => ctx.logError(err),
        // The outcomes the sandbox fixtures force, as the API applies them (buildApp's default).
        outcomes: sandboxBookingOutcomes,
        clock,
      });
      return pass.evaluated.length;
    },
  };
}
