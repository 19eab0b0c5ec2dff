/**
 * The booking evaluator job: each pass evaluates up to a batch of due appointments of this process's
 * environment (`runEvaluatorOnce`, src/domain/appointments/evaluator.ts), every `WORKER_POLL_MS`, at
 * once again after a full batch. A row whose evaluation fails is logged and set aside by the pass.
 */
import { runEvaluatorOnce } from '../domain/appointments/evaluator.js';
import { sandboxBookingOutcomes } from '../domain/sandbox/booking-outcomes.js';
import { LocalClock } from '../domain/scheduling/local-time.js';
import type { JobDeps } from './job-deps.js';
import type { Job } from './loop.js';

/** Appointments claimed per pass. */
export const EVALUATOR_BATCH = 50;

/** The booking evaluator job of `deps.config.appEnv`. */
export function evaluatorJob({ db, config }: JobDeps): Job {
  // Local-time conversions are deterministic: one memo for every pass of the job.
  const clock = new LocalClock();
  return {
    name: 'evaluator',
    title: 'booking evaluator',
    intervalMs: config.workerPollMs,
    batch: EVALUATOR_BATCH,
    async pass(ctx) {
      const pass = await runEvaluatorOnce(db, {
        env: config.appEnv,
        limit: EVALUATOR_BATCH,
        onRowError: (err) => ctx.logError(err),
        // The outcomes the sandbox fixtures force, as the API applies them (buildApp's default).
        outcomes: sandboxBookingOutcomes,
        clock,
      });
      return pass.evaluated.length;
    },
  };
}
