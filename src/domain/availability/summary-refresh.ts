/**
 * The refresher of stored availability summaries (`availability_summaries`, migration 0009): it
 * computes the summaries of an environment's active provider-locations before listings need them,
 * so that a listing of 10,000 entities reads rows instead of computing (docs/directory-format.md,
 * "Performance notes").
 *
 * `refreshAvailabilitySummaries` is one pass; the refresh job (src/jobs/availability-summary-refresh.ts)
 * runs passes in a loop. A pass holds the environment's refresh lease (src/db/leases.ts), renewed
 * between batches: a pass that finds the lease held ends at once (another process is refreshing the
 * environment), so two processes do not compute the same rows, and a pass that finds it lost (it
 * expired while the pass stalled, and another process took it) ends after its batch. The pass takes
 * a pooled connection only for each statement. Then, missing rows first and then the oldest
 * (summary-due.ts):
 * 1. it walks the environment's provider-locations in key order, a slice per statement listing its
 *    active provider-locations without a row. With a `walks` memo (the refresh job
 *    keeps one) the walk is skipped while the directory version is the one at the start of the
 *    last walk that found nothing missing: a row goes missing only when a provider-location is
 *    added or activated, and every such write moves that version (migration 0010's triggers), or
 *    when a batch's write left it out (that walk found it missing, so it is walked for again);
 * 2. it lists the rows older than `olderThanMs`, oldest first, a batch per statement, each row at
 *    most once a pass (a practice's schedule change marks its rows old, stranded.ts); the rows of
 *    deactivated provider-locations among them are deleted.
 * Each batch of `batchSize` re-reads which of its provider-locations are active and still need a
 * summary, with their provider's calendar version (migration 0010), computes them
 * (`directoryAvailabilityOfRows`, no memo) and writes them in one statement (`writeSummaries`)
 * that leaves out a provider-location whose provider's calendar moved meanwhile (a practice's
 * schedule change marks the row old in the transaction that moves the version,
 * src/domain/practices/schedule/stranded.ts) and any row refreshed meanwhile.
 *
 * There is no transaction: every statement holds the embedded engine for itself alone, never across
 * the computation or another statement (issue #20 §5; docs/performance.md, "The summary refresh in
 * slices"), and the pass yields to the event loop between batches. Its reads of
 * `availability_summaries` are planned each time (src/db/generic-plan.ts, `plannedEachTime`): a pass
 * fills the table they read, and a plan kept from their first executions was made on the table as
 * it was then.
 *
 * Rows of provider-locations that became inactive are deleted once they are older than
 * `olderThanMs` (until then they are within the staleness listings allow, and listings show only
 * active provider-locations); deleted provider-locations take their row along (ON DELETE CASCADE).
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { plannedEachTime } from '../../db/generic-plan.js';
import type { Env } from '../../db/schema.js';
import { LocalClock } from '../scheduling/local-time.js';
import { yieldToEventLoop } from '../../lib/time-slice.js';
import { weeklyBlocksAggSql } from '../scheduling/schedule-data.js';
import { directoryAvailabilityOfRows, type AvailabilityInputRow } from './directory-availability.js';
import { missingInSlice, oldestRows } from './summary-due.js';
import { writeSummaries } from './summary-store.js';
import { withLease, type Lease } from '../../db/leases.js';

/** Default age (ms) past which a pass recomputes a row: well within the 60 s that listings serve (`MAX_SUMMARY_TTL_MS`). */
export const REFRESH_OLDER_THAN_MS = 40_000;
/** Default provider-locations per batch (~10–20 ms of computation). */
export const REFRESH_BATCH_SIZE = 250;

export interface RefreshOptions {
  env: Env;
  /** The instant to compute for, or a clock read at the start and at each batch; default: the current time at each. */
  now?: Date | (() => Date);
  /** Rows computed more than this long before a batch's instant are recomputed (default `REFRESH_OLDER_THAN_MS`). */
  olderThanMs?: number;
  /** Provider-locations per batch (default `REFRESH_BATCH_SIZE`). */
  batchSize?: number;
  /** Provider-locations per listing statement of missing rows (default `DUE_SLICE`). */
  sliceSize?: number;
  /** Aborted: the pass ends after the batch in progress. */
  signal?: AbortSignal;
  /** Kept from pass to pass by one refresher: lets a pass skip the walk for missing rows (module comment, 1). */
  walks?: MissingWalkMemo;
  /** The database admits this process alone (the embedded engine): a lease found held is a dead process's (src/db/leases.ts). */
  soleProcess?: boolean;
}

/** The directory version at the start of the last walk for missing rows that found none (null: none yet). */
export interface MissingWalkMemo {
  directoryVersion: string | null;
}

/** How long a pass's lease holds without a renewal (a batch takes ~10–20 ms; the pass renews it every third of this). */
export const REFRESH_LEASE_MS = 30_000;

/** The name of the lease a pass of `env` holds (a row of this schema's `job_leases`). */
export function refreshLeaseName(env: Env): string {
  return `carebook.availability_summaries.${env}`;
}

/** A batch's provider-location as `directoryAvailabilityOfRows` needs it, with its provider's calendar version ("0" before any change). */
interface RefreshRow extends AvailabilityInputRow {
  cv: string;
}

/** What `directoryAvailabilityOfRows` needs of those of `ids` that are active and still need a summary at `cutoff`. */
async function inputRows(db: Db, env: Env, ids: string[], cutoff: Date): Promise<RefreshRow[]> {
  // The row's age is a correlated subquery on purpose: looked up by primary key per provider-location
  // (a join may be planned as a scan of the whole table). The calendar version is read before the
  // schedule is: the write leaves the row out if it has moved since.
  const { rows } = await plannedEachTime(sql<RefreshRow>`
    SELECT pl.id, pl.provider_id, pl.location_id, l.time_zone, p.visit_reason_ids, p.default_visit_reason_id,
      (SELECT ${weeklyBlocksAggSql()} FROM weekly_schedules ws WHERE ws.env = pl.env AND ws.provider_location_id = pl.id) AS blocks,
      coalesce((SELECT v.version::text FROM calendar_versions v WHERE v.env = pl.env AND v.provider_id = pl.provider_id), '0') AS cv
    FROM provider_locations pl
    JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
    WHERE pl.env = ${env} AND pl.id = ANY(${ids}::text[]) AND pl.active
      AND coalesce((SELECT s.computed_at FROM availability_summaries s WHERE s.env = pl.env AND s.provider_location_id = pl.id),
                   '-infinity') < ${cutoff}`).execute(db);
  return rows;
}

/**
 * Deletes the rows among `ids` (of `env`) older than `cutoff` whose provider-location is no longer
 * active: listings never serve them, and no walk may come to delete them.
 */
async function deleteInactiveRows(db: Db, env: Env, ids: string[], cutoff: Date): Promise<void> {
  await sql`
    DELETE FROM availability_summaries s
    WHERE s.env = ${env} AND s.provider_location_id = ANY(${ids}::text[]) AND s.computed_at < ${cutoff}
      AND NOT EXISTS (SELECT 1 FROM provider_locations pl WHERE pl.env = s.env AND pl.id = s.provider_location_id AND pl.active)`.execute(db);
}

/**
 * One batch (see the module comment): how many summaries it wrote. `old`: the ids are rows found
 * old, so those not to be recomputed may be rows of deactivated provider-locations, deleted here.
 */
async function refreshBatch(db: Db, env: Env, ids: string[], now: Date, olderThanMs: number, clock: LocalClock, old: boolean): Promise<number> {
  const cutoff = new Date(now.getTime() - olderThanMs);
  const rows = await inputRows(db, env, ids, cutoff);
  if (old && rows.length < ids.length) {
    const kept = new Set(rows.map((r) => r.id));
    await deleteInactiveRows(db, env, ids.filter((id) => !kept.has(id)), cutoff);
  }
  if (rows.length === 0) return 0;
  const summaries = await directoryAvailabilityOfRows(db, { env, rows, now, clock });
  const calendars = new Map(rows.map((r) => [r.id, { providerId: r.provider_id, version: r.cv }]));
  return writeSummaries(db, env, now, summaries, { replaceOlderThan: cutoff, calendars });
}

/**
 * One refresh pass over `env` (see the module comment). Returns how many summaries it wrote; 0 when
 * every row was young enough, or when another process holds the environment's refresh lease.
 */
export async function refreshAvailabilitySummaries(db: Db, opts: RefreshOptions): Promise<number> {
  const leaseOptions = { ttlMs: REFRESH_LEASE_MS, soleProcess: opts.soleProcess };
  return (await withLease(db, refreshLeaseName(opts.env), leaseOptions, (lease) => pass(db, opts, lease))) ?? 0;
}

/** The pass itself, holding the lease. */
async function pass(db: Db, opts: RefreshOptions, lease: Lease): Promise<number> {
  const { env } = opts;
  const olderThanMs = opts.olderThanMs ?? REFRESH_OLDER_THAN_MS;
  const batchSize = Math.max(1, opts.batchSize ?? REFRESH_BATCH_SIZE);
  const now = opts.now;
  const at = (): Date => (now === undefined ? new Date() : typeof now === 'function' ? now() : now);
  const clock = new LocalClock();
  const cutoff = new Date(at().getTime() - olderThanMs);

  let refreshed = 0;
  let batches = 0;
  /** Refreshes `ids` a batch at a time; false once the pass is to end. */
  const refresh = async (ids: string[], old: boolean): Promise<boolean> => {
    for (let i = 0; i < ids.length; i += batchSize) {
      if (opts.signal?.aborted || !(await lease.keep())) return false;
      if (batches++ > 0) await yieldToEventLoop();
      refreshed += await refreshBatch(db, env, ids.slice(i, i + batchSize), at(), olderThanMs, clock, old);
    }
    return true;
  };

  // Missing rows first, a slice at a time, unless nothing can have gone missing since a walk that
  // found nothing.
  const version = opts.walks ? await directoryVersion(db) : null;
  if (version === null || version !== opts.walks?.directoryVersion) {
    let found = 0;
    for (let after = ''; ; ) {
      const slice = await missingInSlice(db, env, after, opts.sliceSize);
      if (slice.last === null) break;
      after = slice.last;
      found += slice.missing.length;
      if (!(await refresh(slice.missing, false))) return refreshed;
    }
    if (opts.walks && found === 0) opts.walks.directoryVersion = version;
  }
  // Then the oldest rows, a batch at a time, each at most once.
  for (let from: { at: string; id: string } | undefined; ; ) {
    const due = await oldestRows(db, env, cutoff, from, batchSize);
    if (due.length === 0) break;
    from = due[due.length - 1]!;
    if (!(await refresh(due.map((r) => r.id), true))) return refreshed;
  }
  return refreshed;
}

/** The directory's version (migration 0010), as decimal text. */
async function directoryVersion(db: Db): Promise<string> {
  const { rows } = await sql<{ v: string }>`SELECT version::text AS v FROM directory_version`.execute(db);
  return rows[0]!.v;
}
