/**
 * The schedule behind many start times at once, in one statement (the booking evaluator's batch,
 * docs/api/appointments.md#moves-the-service-makes): for each provider-location asked about, its
 * zone, whether it is active, its provider's visit reasons and its weekly schedule; the durations of
 * the visit reasons asked about (the directory's and the practice's overrides, visit-reason-durations.ts); the calendar timeslots within two days of each start; the time off
 * of each provider within four days of each start. What `isScheduledStart`
 * (src/domain/availability/scheduled-start.ts) reads for one start in five statements, read for a
 * whole batch in one; `offersStartAmong` then looks at exactly the part `isScheduledStart` would
 * have read for each start, so the answers are the same.
 */
import { sql, type Kysely } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import {
  driverJson,
  parseWeeklyBlocks,
  pushedSlotOf,
  timeOffSpanOf,
  weeklyBlocksAggSql,
  type PushedSlotJson,
  type ScheduleData,
  type SlotSource,
  type TimeOffJson,
  type TimeOffSpan,
} from './schedule-data.js';
import { directoryDurationsJsonSql, overridesJsonSql, readDurationsJson } from './visit-reason-durations.js';

/** A provider-location as the evaluator needs it: what slots are computed from, and whether it is active. */
export interface StartSource extends SlotSource {
  active: boolean;
}

/** One start time asked about. */
export interface StartQuery {
  providerLocationId: string;
  visitReasonId: string;
  startMs: number;
}

export interface SchedulesForStarts {
  /** The provider-locations found (active or not), by id. */
  pls: Map<string, StartSource>;
  /** Their schedules (held time not loaded). */
  data: ScheduleData;
}

interface PlJson {
  id: string;
  provider_id: string;
  time_zone: string;
  active: boolean;
  visit_reason_ids: string[] | null;
  default_visit_reason_id: string | null;
  blocks: string | null;
}

/**
 * Loads, in one statement, the schedules behind `starts` in `env` (see the module comment). Works on
 * the root `Kysely` or inside a transaction (pass the handle).
 */
export async function loadSchedulesForStarts(db: Kysely<Database>, env: Env, starts: StartQuery[]): Promise<SchedulesForStarts> {
  const pls = new Map<string, StartSource>();
  const data: ScheduleData = { pls, durations: new Map(), overrides: new Map(), blocks: new Map(), pushed: new Map(), holds: new Map(), timeOff: new Map() };
  if (starts.length === 0) return { pls, data };
  const plIds = starts.map((s) => s.providerLocationId);
  const at = starts.map((s) => new Date(s.startMs).toISOString());
  const reasons = [...new Set(starts.map((s) => s.visitReasonId))];
  const uniquePls = [...new Set(plIds)];
  const { rows } = await sql<{ pls: unknown; durations: unknown; overrides: unknown; pushed: unknown; time_off: unknown }>`
    WITH want AS (
      SELECT DISTINCT w.pl_id, w.start_at FROM unnest(${plIds}::text[], ${at}::timestamptz[]) AS w(pl_id, start_at)
    ), pl AS (
      SELECT pl.id, pl.provider_id, pl.location_id, l.time_zone, pl.active, p.visit_reason_ids, p.default_visit_reason_id
      FROM provider_locations pl
      JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
      JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
      -- Ids as one array parameter (= ANY), as loadProviderLocations does: one statement text, and the planner may look each up by key.
      WHERE pl.env = ${env} AND pl.id = ANY(${uniquePls}::text[])
    )
    SELECT
      (SELECT json_agg(json_build_object(
                'id', pl.id, 'provider_id', pl.provider_id, 'time_zone', pl.time_zone, 'active', pl.active,
                'visit_reason_ids', pl.visit_reason_ids, 'default_visit_reason_id', pl.default_visit_reason_id,
                'blocks', (SELECT ${weeklyBlocksAggSql()} FROM weekly_schedules ws WHERE ws.env = ${env} AND ws.provider_location_id = pl.id)))
         FROM pl) AS pls,
      ${directoryDurationsJsonSql(env, reasons)} AS durations,
      ${overridesJsonSql(env, uniquePls)} AS overrides,
      (SELECT json_agg(json_build_object(
                'pl', s.pl_id, 'local_date', s.local_date::text, 'start_ms', (extract(epoch FROM s.start_utc) * 1000)::float8,
                'allowed', s.allowed_visit_reason_ids, 'excluded', s.excluded_visit_reason_ids, 'patient_type', s.patient_type))
         FROM (SELECT DISTINCT ON (ct.id) pl.id AS pl_id, ct.local_date, ct.start_utc, ct.allowed_visit_reason_ids, ct.excluded_visit_reason_ids, ct.patient_type
               FROM want w JOIN pl ON pl.id = w.pl_id
               -- One index lookup per start (by provider), never a scan of all the environment's timeslots
               -- (OFFSET 0 keeps the planner from flattening the LATERAL subquery into a join).
               CROSS JOIN LATERAL (
                 SELECT * FROM calendar_timeslots c
                 WHERE c.env = ${env} AND c.provider_id = pl.provider_id AND c.location_id = pl.location_id
                   AND c.start_utc >= w.start_at - interval '2 days' AND c.start_utc < w.start_at + interval '2 days'
                 OFFSET 0) ct) s) AS pushed,
      (SELECT json_agg(json_build_object(
                'provider_id', s.provider_id, 'provider_location_id', s.provider_location_id, 'start_date', s.start_date::text,
                'end_date', s.end_date::text, 'start_local', to_char(s.start_local, 'HH24:MI'), 'end_local', to_char(s.end_local, 'HH24:MI')))
         FROM (SELECT DISTINCT ON (t.id) t.provider_id, t.provider_location_id, t.start_date, t.end_date, t.start_local, t.end_local
               FROM want w JOIN pl ON pl.id = w.pl_id
               CROSS JOIN LATERAL (
                 SELECT * FROM time_off o
                 WHERE o.env = ${env} AND o.provider_id = pl.provider_id
                   AND o.end_date >= (w.start_at AT TIME ZONE 'UTC')::date - 4 AND o.start_date <= (w.start_at AT TIME ZONE 'UTC')::date + 4
                 OFFSET 0) t) s) AS time_off`.execute(db);
  const r = rows[0]!;
  for (const p of driverJson<PlJson[]>(r.pls) ?? []) {
    const visitReasonIds = p.visit_reason_ids?.length ? p.visit_reason_ids : p.default_visit_reason_id ? [p.default_visit_reason_id] : [];
    pls.set(p.id, { id: p.id, providerId: p.provider_id, timeZone: p.time_zone, active: p.active, visitReasonIds });
    data.blocks.set(p.id, parseWeeklyBlocks(p.blocks));
  }
  readDurationsJson(data, r.durations, r.overrides);
  for (const s of driverJson<(PushedSlotJson & { pl: string })[]>(r.pushed) ?? []) {
    let list = data.pushed.get(s.pl);
    if (!list) data.pushed.set(s.pl, (list = []));
    list.push(pushedSlotOf(s));
  }
  for (const t of driverJson<(TimeOffJson & { provider_id: string })[]>(r.time_off) ?? []) {
    let list = data.timeOff.get(t.provider_id);
    if (!list) data.timeOff.set(t.provider_id, (list = []));
    list.push(timeOffSpanOf(t) satisfies TimeOffSpan);
  }
  return { pls, data };
}
