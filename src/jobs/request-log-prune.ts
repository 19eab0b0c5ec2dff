/**
 * The request-log job (docs/api/request-log.md): every minute, deletes entries older than 7 days and
 * each developer's entries past the newest 10,000 (`pruneRequestLog`), and daily usage counters
 * older than 90 days (`pruneUsageDaily`, docs/console.md, "Usage"). Deleting is idempotent, so
 * several processes running it at once only repeat a little work.
 */
import { pruneRequestLog, pruneUsageDaily } from '../domain/request-log/prune.js';
import type { JobDeps } from './job-deps.js';
import type { Job } from './loop.js';

export const REQUEST_LOG_PRUNE_INTERVAL_MS = 60_000;

/** The request-log pruning job of the database `deps.db`. */
export function requestLogPruneJob({ db }: JobDeps): Job {
  return {
    name: 'request-log-prune',
    title: 'request-log pruning',
    intervalMs: REQUEST_LOG_PRUNE_INTERVAL_MS,
    firstPassAfterMs: 5_000,
    pass: async () => (await pruneRequestLog(db)) + (await pruneUsageDaily(db)),
  };
}
