/**
 * Loads what availability needs for a set of provider-locations and a UTC window (docs/api/availability.md#where-bookable-times-come-from):
 * the provider-location with its provider and location zone, visit reason durations (the directory's
 * and the practice's overrides, `visit-reason-durations.ts`), weekly schedule
 * blocks, calendar timeslots and the provider's held time ranges. Five set-based queries for any
 * number of provider-locations (the weekly schedule query is skipped when the caller already has it). Works on the root `Kysely` or inside a transaction (pass the handle).
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { genericPlan } from '../../db/generic-plan.js';
import type { Database, Env } from '../../db/schema.js';
import type { PatientType } from '../patient-type.js';
import { heldTimeJsonSql } from './held-time-sql.js';
import { DAY_MS, wallMinutes } from './local-time.js';
import { providerLocationOfJson, type ProviderLocationContext, type ProviderLocationJson } from './provider-location-json.js';
import { directoryDurationsJsonSql, overridesJsonSql, readDurationsJson, type DurationData } from './visit-reason-durations.js';

export type { ProviderLocationContext } from './provider-location-json.js';

/** What slot computation needs of a provider-location (a `ProviderLocationContext` has it all). */
export interface SlotSource {
  id: string;
  providerId: string;
  timeZone: string;
  /** Visit reasons the provider accepts. */
  visitReasonIds: string[];
}

export interface WeeklyBlock {
  weekday: number;
  startMin: number;
  endMin: number;
  visitReasonIds: string[] | null;
  patientType: PatientType | null;
}

export interface PushedSlot {
  localDate: string;
  startMs: number;
  allowed: string[] | null;
  excluded: string[] | null;
  patientType: PatientType | null;
}

/**
 * Time off as stored (docs/scheduling.md, "Time off"): local dates and optional local times, read in
 * each provider-location's own zone when slots are walked (`timeOffSpans`).
 */
export interface TimeOffSpan {
  /** Null: every location of the provider. */
  providerLocationId: string | null;
  startDate: string;
  endDate: string;
  /** Minutes after midnight on `startDate`; null: from midnight. */
  startMin: number | null;
  /** Minutes after midnight on `endDate`; null: to the end of that day. */
  endMin: number | null;
}

/** Durations come as `DurationData`: read them only through `effectiveDurations` (visit-reason-durations.ts). */
export interface ScheduleData extends DurationData {
  pls: Map<string, SlotSource>;
  blocks: Map<string, WeeklyBlock[]>;
  /** Pushed calendar slots by provider-location id. */
  pushed: Map<string, PushedSlot[]>;
  /** Held ranges by provider id, sorted by start (epoch ms). */
  holds: Map<string, [number, number][]>;
  /** Time off by provider id (only rows that may touch the loaded window). */
  timeOff: Map<string, TimeOffSpan[]>;
}

/**
 * Provider-location contexts (active or not) for `ids` (a reschedule's, a practice's moves and
 * calendars, availability lists). One array parameter, not one per id: a listing may ask for
 * 10,000 (measured ~100 ms less then). Run with its generic plan (src/db/generic-plan.ts: an id
 * list makes PostgreSQL's `auto` plan it again on every execution; ~200 µs of the server's CPU
 * for one id that way, ~50 µs generic; docs/performance.md, "The mark on PostgreSQL"): primary-key
 * probes per id, checked by test/directory/read-plans.test.ts.
 */
export async function loadProviderLocations(db: Kysely<Database>, env: Env, ids: string[]): Promise<Map<string, ProviderLocationContext>> {
  const out = new Map<string, ProviderLocationContext>();
  if (ids.length === 0) return out;
  const { rows } = await genericPlan(sql<ProviderLocationJson>`
    SELECT pl.id, pl.provider_id, pl.location_id, p.practice_id, l.time_zone, pl.active, pl.confirmation_type, pl.visit_type,
           pl.is_provider_resource, l.phone_number, l.phone_extension, p.visit_reason_ids, p.default_visit_reason_id, pl.required_fields
    FROM provider_locations pl
    JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
    WHERE pl.env = ${env} AND pl.id = ANY(${ids}::text[])`).execute(db);
  for (const r of rows) out.set(r.id, providerLocationOfJson(r));
  return out;
}

/**
 * A provider-location's weekly schedule as one compact text value, aggregated over rows of
 * `weekly_schedules ws` (one string per provider-location instead of a row per block: 10,000
 * provider-locations carry ~100,000 blocks). `parseWeeklyBlocks` reads it back.
 */
export function weeklyBlocksAggSql(): RawBuilder<string | null> {
  return sql<string | null>`string_agg(ws.weekday || '|' || to_char(ws.start_local, 'HH24:MI') || '|' || to_char(ws.end_local, 'HH24:MI')
      || '|' || coalesce(array_to_string(ws.visit_reason_ids, ','), '') || '|' || coalesce(ws.patient_type, ''), ';')`;
}

/** The blocks of a `weeklyBlocksAggSql` value (null: no schedule). */
export function parseWeeklyBlocks(text: string | null): WeeklyBlock[] {
  if (!text) return [];
  return text.split(';').map((b) => {
    const [wd, start, end, reasons, pt] = b.split('|');
    return {
      weekday: Number(wd),
      startMin: wallMinutes(start!),
      endMin: wallMinutes(end!),
      visitReasonIds: reasons ? reasons.split(',') : null,
      patientType: pt === 'new' || pt === 'existing' ? pt : null,
    };
  });
}

/**
 * Everything else for `pls` within `[fromMs, toMs)`, read in one statement; holds are skipped when `withHolds` is false.
 * `blocks` may carry weekly schedules the caller has already read (then they are not queried).
 */
export async function loadScheduleData(
  db: Kysely<Database>,
  env: Env,
  pls: Map<string, SlotSource>,
  window: { fromMs: number; toMs: number },
  opts: { withHolds: boolean; visitReasonIds: string[]; blocks?: Map<string, WeeklyBlock[]> },
): Promise<ScheduleData> {
  const ids = [...pls.keys()];
  const providerIds = [...new Set([...pls.values()].map((p) => p.providerId))];
  const data: ScheduleData = { pls, durations: new Map(), overrides: new Map(), blocks: opts.blocks ?? new Map(), pushed: new Map(), holds: new Map(), timeOff: new Map() };
  if (ids.length === 0) return data;
  const from = new Date(window.fromMs);
  const to = new Date(window.toMs);

  const { fromDate, toDate } = timeOffDates(window);
  // One statement, one round trip (issue #20 §6): on the embedded engine every statement is a turn of
  // the one thread it shares with the API, and on PostgreSQL five statements took five connections.
  // Id lists travel as one array parameter (`= ANY`), whatever their length. Marked for its generic
  // plan (src/db/generic-plan.ts): PostgreSQL's `auto` planned it again on every execution for one
  // provider-location, and for 250 its plans for the values scanned every calendar timeslot; the
  // generic plan reads each table by its index for any window and any number of provider-locations
  // (docs/performance.md, "The schedule data's plan").
  const { rows } = await genericPlan(sql<{ durations: unknown; overrides: unknown; blocks: unknown; pushed: unknown; holds: unknown; time_off: unknown }>`
    SELECT
      ${directoryDurationsJsonSql(env, opts.visitReasonIds)} AS durations,
      ${overridesJsonSql(env, ids)} AS overrides,
      ${opts.blocks
        ? sql`NULL::json`
        : sql`(SELECT json_agg(json_build_object('id', b.id, 'blocks', b.blocks)) FROM (
            SELECT ws.provider_location_id AS id, ${weeklyBlocksAggSql()} AS blocks
            FROM weekly_schedules ws
            WHERE ws.env = ${env} AND ws.provider_location_id = ANY(${ids}::text[])
            GROUP BY ws.provider_location_id) b)`} AS blocks,
      (SELECT json_agg(json_build_object(
                'pl', ct.provider_id || '|' || ct.location_id, 'local_date', ct.local_date::text,
                'start_ms', (extract(epoch FROM ct.start_utc) * 1000)::float8,
                'allowed', ct.allowed_visit_reason_ids, 'excluded', ct.excluded_visit_reason_ids, 'patient_type', ct.patient_type) ORDER BY ct.start_utc)
         FROM calendar_timeslots ct
         WHERE ct.env = ${env} AND ct.provider_id = ANY(${providerIds}::text[]) AND ct.start_utc >= ${from} AND ct.start_utc < ${to}) AS pushed,
      ${opts.withHolds
        ? heldTimeJsonSql(env, sql`${providerIds}::text[]`, from, to)
        : sql`NULL::json`} AS holds,
      (SELECT json_agg(json_build_object(
                'provider_id', t.provider_id, 'provider_location_id', t.provider_location_id, 'start_date', t.start_date::text,
                'end_date', t.end_date::text, 'start_local', to_char(t.start_local, 'HH24:MI'), 'end_local', to_char(t.end_local, 'HH24:MI')))
         FROM time_off t
         WHERE t.env = ${env} AND t.provider_id = ANY(${providerIds}::text[]) AND t.start_date <= ${toDate}::date AND t.end_date >= ${fromDate}::date) AS time_off`).execute(db);
  const r = rows[0]!;
  readDurationsJson(data, r.durations, r.overrides);
  for (const b of driverJson<{ id: string; blocks: string | null }[]>(r.blocks) ?? []) data.blocks.set(b.id, parseWeeklyBlocks(b.blocks));
  for (const p of driverJson<(PushedSlotJson & { pl: string })[]>(r.pushed) ?? []) {
    if (!pls.has(p.pl)) continue;
    let list = data.pushed.get(p.pl);
    if (!list) data.pushed.set(p.pl, (list = []));
    list.push(pushedSlotOf(p));
  }
  for (const [providerId, s, e] of driverJson<[string, number, number][]>(r.holds) ?? []) {
    let list = data.holds.get(providerId);
    if (!list) data.holds.set(providerId, (list = []));
    list.push([s, e]);
  }
  for (const t of driverJson<(TimeOffJson & { provider_id: string })[]>(r.time_off) ?? []) {
    let list = data.timeOff.get(t.provider_id);
    if (!list) data.timeOff.set(t.provider_id, (list = []));
    list.push(timeOffSpanOf(t));
  }
  return data;
}

/** A JSON value as a driver hands it back: parsed already (pg, PGlite) or text. */
export function driverJson<T>(v: unknown): T | null {
  if (v === null || v === undefined) return null;
  return (typeof v === 'string' ? JSON.parse(v) : v) as T;
}

/** A calendar timeslot as the schedule statements build it with `json_build_object`. */
export interface PushedSlotJson {
  local_date: string;
  start_ms: number;
  allowed: string[] | null;
  excluded: string[] | null;
  patient_type: 'new' | 'existing' | null;
}

/** A `time_off` row as the schedule statements build it with `json_build_object` (local times as `HH24:MI`). */
export interface TimeOffJson {
  provider_location_id: string | null;
  start_date: string;
  end_date: string;
  start_local: string | null;
  end_local: string | null;
}

/** A calendar timeslot from its JSON. */
export function pushedSlotOf(s: PushedSlotJson): PushedSlot {
  return { localDate: s.local_date, startMs: s.start_ms, allowed: s.allowed, excluded: s.excluded, patientType: s.patient_type };
}

/** The `time_off` row of a provider as a span (local times as minutes). */
export function timeOffSpanOf(r: TimeOffJson): TimeOffSpan {
  return {
    providerLocationId: r.provider_location_id,
    startDate: String(r.start_date).slice(0, 10),
    endDate: String(r.end_date).slice(0, 10),
    startMin: r.start_local === null ? null : wallMinutes(String(r.start_local)),
    endMin: r.end_local === null ? null : wallMinutes(String(r.end_local)),
  };
}

/**
 * The dates (UTC, `YYYY-MM-DD`) time off must touch to be loaded for a UTC window: a span is loaded
 * when `start_date <= toDate` and `end_date >= fromDate` (a day of slack either side covers every zone).
 */
export function timeOffDates(window: { fromMs: number; toMs: number }): { fromDate: string; toDate: string } {
  return { fromDate: new Date(window.fromMs - DAY_MS).toISOString().slice(0, 10), toDate: new Date(window.toMs + DAY_MS).toISOString().slice(0, 10) };
}
