/**
 * The one polling loop of the background jobs (docs/architecture.md, "Background jobs"). A job says
 * what one pass does and how often; the loop runs the passes:
 * - the first pass `firstPassAfterMs` after the start (default at once), then each pass
 *   `intervalMs` after the previous one ended; never two passes of one loop at a time;
 * - backlog: a pass that handled a full `batch` is followed by the next at once, so a job keeps up
 *   with any rate of work instead of doing at most one batch per interval;
 * - `kick()` runs a pass at once (or right after the one in progress);
 * - a pass that throws is logged (without the error's message, which can quote values; see
 *   `loggableError`) and counted, and the next pass comes after the interval;
 * - `stop()` aborts the pass's signal, cancels the next pass and waits for the one in progress.
 * Each loop counts its passes, failed passes, items and the last pass's duration (`/metrics`).
 */
import type { Logger } from 'pino';
import { loggableError } from '../lib/loggable-error.js';

/** What a job's pass may log through. */
export type JobLogger = Pick<Logger, 'error' | 'debug'>;

/** What the loop gives a pass. */
export interface PassContext {
  /** Aborted by `stop()`: a long pass ends early (after the piece of work in progress). */
  signal: AbortSignal;
  logger: JobLogger;
  /** Logs a failure inside the pass that did not end it (e.g. one row of a batch), as the loop logs a failed pass. */
  logError(err: unknown): void;
  /** This deployment does not need the job: no pass follows this one. */
  retire(): void;
}

/** A background job: its name and schedule, and what one pass does. */
export interface Job {
  /** The job's name in metrics (`job` label), e.g. `webhook-delivery`. */
  name: string;
  /** How log lines name it, e.g. `webhook worker` ("webhook worker pass failed"). */
  title: string;
  /** Pause between the end of one pass and the start of the next. */
  intervalMs: number;
  /** Delay before the first pass (default 0: at once). */
  firstPassAfterMs?: number;
  /** A pass that reports this many items or more is followed by the next at once (default: never). */
  batch?: number;
  /** One pass: does the work and resolves to how many items it handled. */
  pass(ctx: PassContext): Promise<number>;
}

/** A loop's counters since it started. */
export interface JobStats {
  job: string;
  /** Passes that ended, failed ones included. */
  passes: number;
  /** Passes that threw. */
  failures: number;
  /** Items the passes reported (rows claimed, events sent, summaries written...). */
  items: number;
  /** How long the last pass took, in milliseconds (undefined before the first one ends). */
  lastDurationMs: number | undefined;
}

/** A running job. */
export interface RunningLoop {
  readonly name: string;
  /** Runs a pass at once, or right after the one in progress; nothing once stopped or retired. */
  kick(): void;
  stats(): JobStats;
  /** Ends the loop: no pass starts after this; resolves when the pass in progress (if any) has ended. */
  stop(): Promise<void>;
}

/** Starts running `job`'s passes (see the module comment); failures are logged through `logger`. */
export function startLoop(job: Job, logger: JobLogger): RunningLoop {
  const abort = new AbortController();
  const stats: JobStats = { job: job.name, passes: 0, failures: 0, items: 0, lastDurationMs: undefined };
  const logError = (err: unknown): void => logger.error({ err: loggableError(err) }, `${job.title} pass failed`);
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  const ctx: PassContext = {
    signal: abort.signal,
    logger,
    logError,
    retire: () => {
      ended = true;
    },
  };

  const schedule = (ms: number): void => {
    clearTimeout(timer);
    timer = ended ? undefined : setTimeout(run, ms);
  };
  const run = (): void => {
    timer = undefined;
    if (ended) return;
    if (running) {
      again = true;
      return;
    }
    const started = performance.now();
    running = (async () => {
      let next = job.intervalMs;
      try {
        const items = await job.pass(ctx);
        stats.items += items;
        if (job.batch !== undefined && items >= job.batch) next = 0;
      } catch (err) {
        stats.failures += 1;
        logError(err);
      }
      stats.passes += 1;
      stats.lastDurationMs = performance.now() - started;
      running = undefined;
      if (again) {
        again = false;
        next = 0;
      }
      schedule(next);
    })();
  };

  schedule(job.firstPassAfterMs ?? 0);
  return {
    name: job.name,
    kick() {
      if (ended) return;
      if (running) again = true;
      else schedule(0);
    },
    stats: () => ({ ...stats }),
    async stop() {
      ended = true;
      abort.abort();
      clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
