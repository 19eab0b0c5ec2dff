/**
 * The availability summary refresh job: each pass recomputes the stored summaries of this process's
 * environment that are missing or older than 40 s (`refreshAvailabilitySummaries`,
 * src/domain/availability/summary-refresh.ts), at once at start and then 5 s after each
 * pass. So a row is recomputed when 40–45 s old (plus the time passes take to reach it), and listings,
 * which serve rows up to 60 s old, find them. `stop()` ends a pass after the batch in progress.
 */
import { REFRESH_BATCH_SIZE, REFRESH_OLDER_THAN_MS, refreshAvailabilitySummaries, type MissingWalkMemo } from '../domain/availability/summary-refresh.js';
import type { JobDeps } from './job-deps.js';
import type { Job } from './loop.js';

/** Pause (ms) between passes. */
export const REFRESH_INTERVAL_MS = 5_000;

/** The refresh job of `deps.config.appEnv`; `opts` changes the row age and batch size (tests). */
export function availabilitySummaryRefreshJob({ db, config, engine }: JobDeps, opts: { olderThanMs?: number; batchSize?: number } = {}): Job {
  // Kept across passes: a pass skips the walk for missing rows while the directory has not changed
  // since one that found none (summary-refresh.ts).
  const walks: MissingWalkMemo = { directoryVersion: null };
  return {
    name: 'availability-summary-refresh',
    title: 'availability summary refresh',
    intervalMs: REFRESH_INTERVAL_MS,
    pass: (ctx) =>
      refreshAvailabilitySummaries(db, {
        env: config.appEnv,
        signal: ctx.signal,
        olderThanMs: opts.olderThanMs ?? REFRESH_OLDER_THAN_MS,
        batchSize: opts.batchSize ?? REFRESH_BATCH_SIZE,
        walks,
        // The embedded engine admits this process alone: a lease left by a killed process is taken over.
        soleProcess: engine === 'pglite',
      }),
  };
}
