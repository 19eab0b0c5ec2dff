/**
 * The refresher of stored availability summaries (`availability_summaries`, migration 0009): it
 * computes the summaries of an environment's active provider-locations before listings need them,
 * so that a listing of 10,000 entities reads rows instead of computing (docs/directory-format.md,
 * "Performance notes").
 *
 * `refreshAvailabilitySummaries` is one pass; the refresh job (src/jobs/availability-summary-refresh.ts)
 * runs passes in a loop. A pass lists the provider-locations whose row is missing or older than
 * `olderThanMs` (missing first, then oldest first), then takes them in batches of `batchSize`:
 * each batch is one short transaction that takes the environment's advisory lock
 * (`pg_try_advisory_xact_lock`), re-reads which of its provider-locations still need a summary,
 * computes them with `directoryAvailabilityOfRows` (no memo) and upserts them in one statement. So two
 * processes never compute the same rows at once: one that finds the lock taken ends its pass (the
 * other process is refreshing the environment), and a batch never recomputes what another batch
 * committed meanwhile. The pass yields to the event loop between batches. On PGlite (one process,
 * one session) the transactions already run one at a time; the re-read does the rest.
 *
 * Rows of provider-locations that became inactive are deleted once they are older than
 * `olderThanMs` (until then they are within the staleness listings allow, and listings show only
 * active provider-locations); deleted provider-locations take their row along (ON DELETE CASCADE).
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { LocalClock } from '../scheduling/local-time.js';
import { yieldToEventLoop } from '../../lib/time-slice.js';
import { weeklyBlocksAggSql } from '../scheduling/schedule-data.js';
import { directoryAvailabilityOfRows, type AvailabilityInputRow } from './directory-availability.js';
import { writeSummaries } from './summary-store.js';
import { schemaLockId } from '../../db/advisory-locks.js';

/** Default age (ms) past which a pass recomputes a row: well within the 60 s that listings serve (`MAX_SUMMARY_TTL_MS`). */
export const REFRESH_OLDER_THAN_MS = 40_000;
/** Default provider-locations per batch (one transaction, ~10–20 ms of computation). */
export const REFRESH_BATCH_SIZE = 250;

export interface RefreshOptions {
  env: Env;
  /** The instant to compute for, or a clock read at the start and at each batch; default: the current time at each. */
  now?: Date | (() => Date);
  /** Rows computed more than this long before a batch's instant are recomputed (default `REFRESH_OLDER_THAN_MS`). */
  olderThanMs?: number;
  /** Provider-locations per batch (default `REFRESH_BATCH_SIZE`). */
  batchSize?: number;
  /** Aborted: the pass ends after the batch in progress. */
  signal?: AbortSignal;
}

/** The name of the advisory lock a batch of `env` holds (the lock itself is this schema's: `schemaLockId`). */
export function refreshLockKey(env: Env): string {
  return `carebook.availability_summaries.${env}`;
}

/** Takes the refresh lock of `env` in this schema for the rest of the transaction, if free (see `refreshLockKey`). */
export async function tryRefreshLock(trx: Db, env: Env): Promise<boolean> {
  const lock = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${schemaLockId(refreshLockKey(env))}) AS locked`.execute(trx);
  return lock.rows[0]?.locked === true;
}

/** The environment's provider-locations needing a summary at `cutoff`: missing first, then oldest first. */
async function candidates(db: Db, env: Env, cutoff: Date): Promise<string[]> {
  // Old rows by the `availability_summaries_age` index range; missing ones by an anti-join with the
  // provider-location primary key (both index scans, a few ms per 10,000 provider-locations).
  const { rows } = await sql<{ id: string }>`
    SELECT id FROM (
      SELECT pl.id, NULL::timestamptz AS computed_at
      FROM provider_locations pl
      WHERE pl.env = ${env} AND pl.active
        AND NOT EXISTS (SELECT 1 FROM availability_summaries s WHERE s.env = pl.env AND s.provider_location_id = pl.id)
      UNION ALL
      SELECT s.provider_location_id, s.computed_at
      FROM availability_summaries s
      WHERE s.env = ${env} AND s.computed_at < ${cutoff}
    ) c
    ORDER BY computed_at NULLS FIRST, id`.execute(db);
  return rows.map((r) => r.id);
}

/** What `directoryAvailabilityOfRows` needs of those of `ids` that are active and still need a summary at `cutoff`. */
async function inputRows(db: Db, env: Env, ids: string[], cutoff: Date): Promise<AvailabilityInputRow[]> {
  // The row's age is a correlated subquery on purpose: looked up by primary key per provider-location
  // whatever the plan (a join may be planned, and cached, as a scan of the whole table).
  const { rows } = await sql<AvailabilityInputRow>`
    SELECT pl.id, pl.provider_id, pl.location_id, l.time_zone, p.visit_reason_ids, p.default_visit_reason_id,
      (SELECT ${weeklyBlocksAggSql()} FROM weekly_schedules ws WHERE ws.env = pl.env AND ws.provider_location_id = pl.id) AS blocks
    FROM provider_locations pl
    JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
    WHERE pl.env = ${env} AND pl.id = ANY(${ids}::text[]) AND pl.active
      AND coalesce((SELECT s.computed_at FROM availability_summaries s WHERE s.env = pl.env AND s.provider_location_id = pl.id),
                   '-infinity') < ${cutoff}`.execute(db);
  return rows;
}

/**
 * One refresh pass over `env` (see the module comment). Returns how many summaries it wrote; 0 when
 * every row was young enough, or when another process holds the environment's refresh lock.
 */
export async function refreshAvailabilitySummaries(db: Db, opts: RefreshOptions): Promise<number> {
  const { env } = opts;
  const olderThanMs = opts.olderThanMs ?? REFRESH_OLDER_THAN_MS;
  const batchSize = Math.max(1, opts.batchSize ?? REFRESH_BATCH_SIZE);
  const now = opts.now;
  const at = (): Date => (now === undefined ? new Date() : typeof now === 'function' ? now() : now);
  const clock = new LocalClock();

  const start = at();
  const cutoff = new Date(start.getTime() - olderThanMs);
  // Rows of deactivated provider-locations, once past the age at which they would be refreshed.
  await sql`
    DELETE FROM availability_summaries s USING provider_locations pl
    WHERE s.env = ${env} AND s.computed_at < ${cutoff} AND pl.env = s.env AND pl.id = s.provider_location_id AND NOT pl.active`.execute(db);
  const ids = await candidates(db, env, cutoff);

  let refreshed = 0;
  for (let i = 0; i < ids.length; i += batchSize) {
    if (opts.signal?.aborted) break;
    if (i > 0) await yieldToEventLoop();
    const batch = ids.slice(i, i + batchSize);
    const done = await db.transaction().execute(async (trx) => {
      if (!(await tryRefreshLock(trx, env))) return undefined;
      const batchNow = at();
      const rows = await inputRows(trx, env, batch, new Date(batchNow.getTime() - olderThanMs));
      if (rows.length === 0) return 0;
      const summaries = await directoryAvailabilityOfRows(trx, { env, rows, now: batchNow, clock });
      await writeSummaries(trx, env, batchNow, summaries);
      return summaries.size;
    });
    // Another process is refreshing this environment: it will finish the pass.
    if (done === undefined) break;
    refreshed += done;
  }
  return refreshed;
}
