/**
 * The background jobs of the service, and the one function that starts them (`serve`, each API
 * process of `serve --processes`, and `carebook worker`; `serve --no-workers` starts none). Every job
 * claims its work with locks (row locks with `FOR UPDATE SKIP LOCKED`; the summary refresh and table
 * maintenance, leases: src/db/leases.ts), so it may run in every API process, in dedicated `carebook worker`
 * processes, or both, without doing anything twice. Each process runs each job once: the API of a
 * process only kicks the jobs of that process (`JobHandles`), it never starts one.
 *
 * A new job: one file in src/jobs exporting a `JobFactory`, and one line in `JOBS`.
 */
import { availabilitySummaryRefreshJob } from './availability-summary-refresh.js';
import { evaluatorJob } from './evaluator.js';
import { insuranceMappingsJob } from './insurance-mappings.js';
import type { JobDeps } from './job-deps.js';
import { startLoop, type Job, type JobLogger, type JobStats, type RunningLoop } from './loop.js';
import { requestLogPruneJob } from './request-log-prune.js';
import { tableMaintenanceJob } from './table-maintenance.js';
import { webhookDeliveryJob } from './webhook-delivery.js';

/** Makes a job from the process's dependencies. */
export type JobFactory = (deps: JobDeps) => Job;

/** Every background job, in start order. */
export const JOBS: readonly JobFactory[] = [
  evaluatorJob,
  webhookDeliveryJob,
  insuranceMappingsJob,
  availabilitySummaryRefreshJob,
  tableMaintenanceJob,
  requestLogPruneJob,
];

/** What the rest of a process (the app's routes and `/metrics`) may do with its running jobs. */
export interface JobHandles {
  /** A function that kicks the named job of this process (nothing when it does not run here). */
  kicker(name: string): () => void;
  /** The counters of every job running in this process. */
  stats(): JobStats[];
}

/** The jobs running in a process. */
export interface RunningJobs extends JobHandles {
  /** The names of the running jobs, in start order. */
  readonly names: readonly string[];
  /** Stops every job and waits for the passes in progress. */
  stop(): Promise<void>;
}

/** Starts `jobs` (default every job of `JOBS`) over `deps`; failed passes are logged through `logger`. */
export function startJobs(deps: JobDeps, logger: JobLogger, jobs: readonly JobFactory[] = JOBS): RunningJobs {
  const loops = new Map<string, RunningLoop>();
  for (const make of jobs) {
    const job = make(deps);
    if (loops.has(job.name)) throw new Error(`job ${job.name} listed twice`);
    loops.set(job.name, startLoop(job, logger));
  }
  return {
    names: [...loops.keys()],
    kicker: (name) => () => loops.get(name)?.kick(),
    stats: () => [...loops.values()].map((l) => l.stats()),
    async stop() {
      await Promise.all([...loops.values()].map((l) => l.stop()));
    },
  };
}
