/**
 * Stored availability summaries (`availability_summaries`, migration 0009): reading the rows a
 * listing may serve and writing a batch of computed summaries. The refresher that keeps the rows
 * young is `summary-refresh.ts`; `directoryAvailability` (`directory-availability.ts`) reads them.
 *
 * A row holds the summary the refresher computed for the instant `computed_at`. It is
 * served only while `computed_at` lies within the caller's staleness (at most
 * `MAX_SUMMARY_TTL_MS`, 60 s) before the request's "now", and never when computed for a later
 * instant than that "now". So a missing, old or future row only costs a computation on the request.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.js';
import { epochMsSql } from '../../db/epoch-ms.js';
import type { Env } from '../../db/schema.js';
import type { AvailabilitySummary, Next28Days, PatientTypeAvailability } from './summaries.js';
import { genericPlan } from '../../db/generic-plan.js';

/** A stored summary and the instant (epoch ms) it was computed for. */
export interface StoredSummary {
  summary: AvailabilitySummary;
  computedAtMs: number;
}

interface SummaryRow {
  id: string;
  computed_ms: number;
  new_next_available_utc: string | null;
  new_next_28_days: Next28Days;
  existing_next_available_utc: string | null;
  existing_next_28_days: Next28Days;
  first_availability_date: string | null;
  default_visit_reason_id: string | null;
}

/** A row as `readStoredSummaries` reads it: `SummaryRow`'s fields in order (a `date` comes as its ISO text). */
type SummaryArray = [string, number, string | null, Next28Days, string | null, Next28Days, string | null, string | null];

function patientType(next: string | null, next28: Next28Days): PatientTypeAvailability {
  return next === null ? { next_28_days: next28 } : { next_available_utc: next, next_28_days: next28 };
}

/** The summary of a row, with the keys in the order `computeSummaries` builds them. */
function summaryOf(r: SummaryRow): AvailabilitySummary {
  const s: AvailabilitySummary = {
    new: patientType(r.new_next_available_utc, r.new_next_28_days),
    existing: patientType(r.existing_next_available_utc, r.existing_next_28_days),
  };
  if (r.default_visit_reason_id !== null) s.default_visit_reason_id = r.default_visit_reason_id;
  if (r.first_availability_date !== null) s.first_availability_date_in_provider_local_time = String(r.first_availability_date).slice(0, 10);
  return s;
}

/**
 * The stored summaries of `ids` (of `env`) computed within `maxAgeMs` before `nowMs` (and not after
 * it), in one query. `ids` is a list, or a statement yielding an `id` column (a listing's page,
 * so that its summaries are read alongside the page itself). With `activeOnly`, rows of inactive
 * provider-locations are left out (callers that pass ids they have not checked; listings pass
 * active rows already).
 */
export async function readStoredSummaries(
  db: Db,
  env: Env,
  ids: string[] | RawBuilder<unknown>,
  opts: { nowMs: number; maxAgeMs: number; activeOnly: boolean },
): Promise<Map<string, StoredSummary>> {
  const out = new Map<string, StoredSummary>();
  if ((Array.isArray(ids) && ids.length === 0) || opts.maxAgeMs <= 0) return out;
  const oldest = new Date(opts.nowMs - opts.maxAgeMs);
  const now = new Date(opts.nowMs);
  const active = opts.activeOnly
    ? sql`AND EXISTS (SELECT 1 FROM provider_locations pl WHERE pl.env = s.env AND pl.id = s.provider_location_id AND pl.active)`
    : sql``;
  // The ids are looked up one by one by primary key (LATERAL … LIMIT 1), never by a scan, whatever
  // the planner believes of `computed_at`: the rows are rewritten every ~40 s, so its statistics
  // always lag behind, and a range of the last 60 s looked narrow enough to walk
  // `availability_summaries_age` over the whole table (15 ms for 60 ids at 50,000 rows, measured;
  // docs/performance.md, "Directory reads (issue #20 §7)").
  const source = Array.isArray(ids) ? sql`SELECT unnest(${ids}::text[]) AS id` : ids;
  const from = sql`(${source}) p CROSS JOIN LATERAL (
        SELECT * FROM availability_summaries s1 WHERE s1.env = ${env} AND s1.provider_location_id = p.id LIMIT 1) s WHERE true`;
  // One JSON value (an array of arrays): one native JSON.parse instead of the driver parsing 8 fields
  // per row. For a page of 10,000 this moved ~30–45 ms of CPU off this process's main thread (which
  // a listing needs for everything else) for ~25 ms more in PostgreSQL, measured. The instant as
  // epoch milliseconds (`date_part` is float8 arithmetic, `extract` numeric: src/db/epoch-ms.ts).
  const { rows } = await genericPlan(sql<{ j: SummaryArray[] | null }>`
    SELECT json_agg(json_build_array(s.provider_location_id, ${sql.raw(epochMsSql('s.computed_at'))},
             s.new_next_available_utc, s.new_next_28_days, s.existing_next_available_utc, s.existing_next_28_days,
             s.first_availability_date, s.default_visit_reason_id)) AS j
    FROM ${from}
      AND s.computed_at > ${oldest} AND s.computed_at <= ${now} ${active}`).execute(db);
  for (const a of rows[0]?.j ?? []) {
    const r: SummaryRow = {
      id: a[0],
      computed_ms: a[1],
      new_next_available_utc: a[2],
      new_next_28_days: a[3],
      existing_next_available_utc: a[4],
      existing_next_28_days: a[5],
      first_availability_date: a[6],
      default_visit_reason_id: a[7],
    };
    out.set(r.id, { summary: summaryOf(r), computedAtMs: r.computed_ms });
  }
  return out;
}

/**
 * Writes `summaries` (computed for `computedAt`) as the rows of their provider-locations of `env`,
 * in one statement; returns how many it wrote. It leaves out a provider-location whose provider's
 * calendar version is no longer the one `calendars` gives (read before its schedule was: the
 * schedule may have changed since, docs/scheduling.md, "Races"; the version's row is taken `FOR
 * SHARE`, so a change in progress is waited for and then seen), and replaces only rows computed
 * before `replaceOlderThan` (a row another pass wrote meanwhile stays).
 */
export async function writeSummaries(
  db: Db,
  env: Env,
  computedAt: Date,
  summaries: Map<string, AvailabilitySummary>,
  opts: { replaceOlderThan: Date; calendars: Map<string, { providerId: string; version: string }> },
): Promise<number> {
  if (summaries.size === 0) return 0;
  const records = [...summaries].map(([id, s]) => {
    const calendar = opts.calendars.get(id);
    if (!calendar) throw new Error(`writeSummaries: no calendar version for ${id}`);
    return {
      id,
      nn: s.new.next_available_utc ?? null,
      n28: s.new.next_28_days,
      en: s.existing.next_available_utc ?? null,
      e28: s.existing.next_28_days,
      fd: s.first_availability_date_in_provider_local_time ?? null,
      vr: s.default_visit_reason_id ?? null,
      pid: calendar.providerId,
      cv: calendar.version,
    };
  });
  // Kept plans serve it (the summaries are reached through the conflict's unique index alone).
  const { rows } = await sql<{ id: string }>`
    INSERT INTO availability_summaries AS s (env, provider_location_id, computed_at, new_next_available_utc, new_next_28_days,
      existing_next_available_utc, existing_next_28_days, first_availability_date, default_visit_reason_id)
    SELECT ${env}, r.id, ${computedAt}, r.nn, r.n28, r.en, r.e28, r.fd::date, r.vr
    FROM json_to_recordset(${JSON.stringify(records)}::json) AS r(id text, nn text, n28 text, en text, e28 text, fd text, vr text, pid text, cv text)
    WHERE coalesce((SELECT v.version FROM calendar_versions v WHERE v.env = ${env} AND v.provider_id = r.pid FOR SHARE), 0) = r.cv::bigint
    ON CONFLICT (env, provider_location_id) DO UPDATE SET
      computed_at = excluded.computed_at,
      new_next_available_utc = excluded.new_next_available_utc,
      new_next_28_days = excluded.new_next_28_days,
      existing_next_available_utc = excluded.existing_next_available_utc,
      existing_next_28_days = excluded.existing_next_28_days,
      first_availability_date = excluded.first_availability_date,
      default_visit_reason_id = excluded.default_visit_reason_id
    WHERE s.computed_at < ${opts.replaceOlderThan}
    RETURNING s.provider_location_id AS id`.execute(db);
  return rows.length;
}
