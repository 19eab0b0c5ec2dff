/**
 * What a summary refresh pass has to do (summary-refresh.ts), found a bounded piece at a time so that
 * no statement holds the embedded engine for long whatever the directory's size (docs/performance.md,
 * "The summary refresh in slices"): provider-locations without a stored summary, a slice of the
 * environment's provider-locations in key order per statement, and rows older than the cutoff, a
 * batch per statement in age order. Both are planned each time (src/db/generic-plan.ts): the pass
 * that runs them fills `availability_summaries`.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { plannedEachTime } from '../../db/generic-plan.js';
import type { Env } from '../../db/schema.js';

/** Provider-locations per slice of `missingInSlice` (~1–2 ms of the embedded engine). */
export const DUE_SLICE = 1_000;

/**
 * The slice of `env`'s provider-locations after key `after` (the first `size` in key order): its
 * active provider-locations without a row, in key order, and the slice's last key (null: no
 * provider-location after `after`). (Rows of inactive provider-locations are deleted by the pass's
 * listing of old rows, summary-refresh.ts.)
 */
export async function missingInSlice(db: Db, env: Env, after: string, size = DUE_SLICE): Promise<{ last: string | null; missing: string[] }> {
  // Two bounded index ranges (the slice's keys are a range of the provider-locations' key, and its
  // rows a range of the summaries'), compared here: no join for the planner to price on estimates
  // (the range's end is known only when the statement runs, so it estimated one row, and a nested
  // loop over two slices of 1,000 cost 50 ms).
  const { rows } = await plannedEachTime(sql<{ last: string | null; active: string[]; stored: string[] }>`
    WITH slice AS MATERIALIZED (
      SELECT pl.id, pl.active FROM provider_locations pl
      WHERE pl.env = ${env} AND pl.id > ${after} ORDER BY pl.id LIMIT ${size}
    )
    SELECT (SELECT max(id) FROM slice) AS last,
      ARRAY(SELECT id FROM slice WHERE active ORDER BY id) AS active,
      ARRAY(SELECT s.provider_location_id FROM availability_summaries s
            WHERE s.env = ${env} AND s.provider_location_id > ${after} AND s.provider_location_id <= (SELECT max(id) FROM slice)) AS stored`).execute(db);
  const r = rows[0]!;
  const stored = new Set(r.stored);
  return { last: r.last, missing: r.active.filter((id) => !stored.has(id)) };
}

/**
 * Up to `limit` rows of `env` computed before `cutoff`, oldest first (ties by key), after the row
 * `from` (the last of the previous call; a row's age is the text of its `computed_at`).
 */
export async function oldestRows(db: Db, env: Env, cutoff: Date, from: { at: string; id: string } | undefined, limit: number): Promise<{ at: string; id: string }[]> {
  const { rows } = await plannedEachTime(sql<{ at: string; id: string }>`
    SELECT s.computed_at::text AS at, s.provider_location_id AS id FROM availability_summaries s
    WHERE s.env = ${env} AND s.computed_at < ${cutoff}
      AND (s.computed_at, s.provider_location_id) > (${from?.at ?? '-infinity'}::timestamptz, ${from?.id ?? ''}::text)
    ORDER BY s.computed_at, s.provider_location_id LIMIT ${limit}`).execute(db);
  return rows;
}
