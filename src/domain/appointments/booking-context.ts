/**
 * Everything booking needs to validate a request, read in one statement (one round trip instead of
 * the five of `loadProviderLocations` + visit reason + `loadScheduleData` + insurance plan): the
 * provider-location if it is in the caller's directory, the visit reason's durations (the directory's
 * and the practice's override there, visit-reason-durations.ts), the weekly
 * schedule, the calendar timeslots and time off around the start time, and whether the insurance plan exists.
 * The result feeds the same slot computation as the availability endpoint (`offersStart`).
 *
 * The same statement reads the versions of what it read (migration 0010): the directory's and the
 * provider's calendar's. A context may be reused while they hold (`BookingContextCache`); the
 * booking statement inserts only while they still hold.
 */
import { sql, type Kysely } from 'kysely';
import { statementTemplate, type StatementTemplate } from '../../db/fast/statement-template.js';
import type { Database } from '../../db/schema.js';
import type { Principal } from '../credentials/principal.js';
import { DAY_MS } from '../scheduling/local-time.js';
import {
  driverJson as json,
  parseWeeklyBlocks,
  pushedSlotOf,
  timeOffSpanOf,
  weeklyBlocksAggSql,
  type ProviderLocationContext,
  type PushedSlot,
  type PushedSlotJson,
  type ScheduleData,
  type TimeOffJson,
} from '../scheduling/schedule-data.js';
import { providerLocationOfJson, type ProviderLocationJson } from '../scheduling/provider-location-json.js';
import { directoryDurationsJsonSql, effectiveDurations, overridesJsonSql, readDurationsJson, type Durations } from '../scheduling/visit-reason-durations.js';

export interface BookingContext {
  /** The provider-location when it is in the caller's directory (active or not); else undefined. */
  pl: ProviderLocationContext | undefined;
  /** The directory's durations of the visit reason; undefined when the visit reason does not exist. */
  durations: Durations | undefined;
  /**
   * Its effective durations at this provider-location (the practice's override, else the
   * directory's); undefined when it does not exist or the practice does not offer it there.
   */
  effective: Durations | undefined;
  /** Schedule data of `pl` for `offersStart` (held time not loaded: the database decides it). */
  schedule: ScheduleData;
  /** Whether the insurance plan exists; undefined when none was asked about. */
  insurancePlanKnown: boolean | undefined;
  /** Whether the provider-location (or its practice, where plans are managed there) takes the plan; undefined when none was asked about. */
  insurancePlanInNetwork: boolean | undefined;
  /** Versions read with the context (decimal text of `bigint`s): the booking's write checks them. */
  versions: ContextVersions;
}

/** The directory's and the provider's calendar's versions (migration 0010); the calendar's is "0" before its first change. */
export interface ContextVersions {
  directory: string;
  calendar: string;
}

/** Calendar timeslots this far either side of the start's UTC day are loaded (covers any zone's local day). */
const AROUND_MS = 36 * 3600_000;

/** The context statement's one row. */
interface ContextRow {
  pl: unknown;
  durations: unknown;
  overrides: unknown;
  blocks: string | null;
  pushed: unknown;
  time_off: unknown;
  plan: boolean | null;
  in_network: boolean | null;
  dv: string;
  cv: string;
}

/** The UTC day (days since the epoch) whose context serves a start at `ms`: contexts are read, and kept, per day. */
export function contextDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** The context statement's slots (`contextStatement`). */
const CONTEXT_SLOTS = ['env', 'id', 'developerId', 'reasons', 'ids', 'from', 'to', 'fromDate', 'toDate', 'plan'] as const;

/** The context statement, with or without the insurance plan's questions; compiled once (statement-template.ts). */
function contextStatement(withPlan: boolean): StatementTemplate<(typeof CONTEXT_SLOTS)[number]> {
  return statementTemplate(CONTEXT_SLOTS, (p) => sql`
    WITH pl AS (
      SELECT pl.id, pl.provider_id, pl.location_id, p.practice_id, l.time_zone, pl.active, pl.confirmation_type, pl.visit_type,
             pl.is_provider_resource, l.phone_number, l.phone_extension, p.visit_reason_ids, p.default_visit_reason_id, pl.required_fields,
             pl.accepts_booking_requests_from
      FROM provider_locations pl
      JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
      JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
      WHERE pl.env = ${p.env} AND pl.id = ${p.id}
        AND EXISTS (SELECT 1 FROM developer_provider_locations dpl
                    WHERE dpl.env = pl.env AND dpl.provider_location_id = pl.id AND dpl.developer_id = ${p.developerId})
    )
    SELECT
      (SELECT row_to_json(pl) FROM pl) AS pl,
      ${directoryDurationsJsonSql(p.env, p.reasons)} AS durations,
      ${overridesJsonSql(p.env, p.ids)} AS overrides,
      (SELECT ${weeklyBlocksAggSql()} FROM weekly_schedules ws WHERE ws.env = ${p.env} AND ws.provider_location_id = ${p.id}) AS blocks,
      (SELECT json_agg(json_build_object(
                'local_date', ct.local_date::text, 'start_ms', (extract(epoch FROM ct.start_utc) * 1000)::float8,
                'allowed', ct.allowed_visit_reason_ids, 'excluded', ct.excluded_visit_reason_ids, 'patient_type', ct.patient_type))
         FROM calendar_timeslots ct JOIN pl ON ct.provider_id = pl.provider_id AND ct.location_id = pl.location_id
         WHERE ct.env = ${p.env} AND ct.start_utc >= ${p.from} AND ct.start_utc < ${p.to}) AS pushed,
      (SELECT json_agg(json_build_object(
                'provider_location_id', t.provider_location_id, 'start_date', t.start_date::text, 'end_date', t.end_date::text,
                'start_local', to_char(t.start_local, 'HH24:MI'), 'end_local', to_char(t.end_local, 'HH24:MI')))
         FROM time_off t JOIN pl ON t.provider_id = pl.provider_id AND (t.provider_location_id IS NULL OR t.provider_location_id = pl.id)
         WHERE t.env = ${p.env} AND t.start_date <= ${p.toDate}::date AND t.end_date >= ${p.fromDate}::date) AS time_off,
      ${withPlan
        ? sql`EXISTS (SELECT 1 FROM insurance_plans ip WHERE ip.env = ${p.env} AND ip.id = ${p.plan})`
        : sql`NULL::boolean`} AS plan,
      ${withPlan
        ? sql`(SELECT CASE WHEN pt.insurance_managed_at_practice
                  THEN EXISTS (SELECT 1 FROM practice_insurance_plans pip
                               WHERE pip.env = ${p.env} AND pip.practice_id = pt.id AND pip.insurance_plan_id = ${p.plan})
                  ELSE EXISTS (SELECT 1 FROM provider_location_insurance_plans plip
                               WHERE plip.env = ${p.env} AND plip.provider_location_id = pl.id AND plip.insurance_plan_id = ${p.plan})
                END
              FROM pl JOIN practices pt ON pt.env = ${p.env} AND pt.id = pl.practice_id)`
        : sql`NULL::boolean`} AS in_network,
      (SELECT version::text FROM directory_version) AS dv,
      coalesce((SELECT cv.version::text FROM calendar_versions cv JOIN pl ON cv.provider_id = pl.provider_id WHERE cv.env = ${p.env}), '0') AS cv`);
}

const WITH_PLAN = contextStatement(true);
const WITHOUT_PLAN = contextStatement(false);

/**
 * Loads the booking context of `providerLocationId` for `principal` (its environment and directory),
 * with calendar timeslots within 36 hours of UTC day `day` (`contextDay`), which covers the local
 * day of any start on that UTC day in any zone.
 */
export async function loadBookingContext(
  db: Kysely<Database>,
  principal: Principal,
  input: { providerLocationId: string; visitReasonId: string; insurancePlanId?: string | undefined; day: number },
): Promise<BookingContext> {
  const env = principal.env;
  const id = input.providerLocationId;
  const from = new Date(input.day * DAY_MS - AROUND_MS);
  const to = new Date((input.day + 1) * DAY_MS + AROUND_MS);
  const fromDate = new Date(input.day * DAY_MS - 2 * DAY_MS).toISOString().slice(0, 10);
  const toDate = new Date(input.day * DAY_MS + 2 * DAY_MS).toISOString().slice(0, 10);
  const statement = input.insurancePlanId !== undefined ? WITH_PLAN : WITHOUT_PLAN;
  const { rows } = await db.executeQuery<ContextRow>(statement({
    env, id, developerId: principal.developerId, reasons: [input.visitReasonId], ids: [id], from, to, fromDate, toDate, plan: input.insurancePlanId ?? null,
  }));
  const r = rows[0]!;
  const p = json<ProviderLocationJson>(r.pl);
  const durationData = { durations: new Map<string, Durations>(), overrides: new Map() };
  readDurationsJson(durationData, r.durations, r.overrides);
  const durations = durationData.durations.get(input.visitReasonId);
  const pl: ProviderLocationContext | undefined = p ? providerLocationOfJson({ ...p, accepts_booking_requests_from: p.accepts_booking_requests_from ?? null }) : undefined;
  const pushed: PushedSlot[] = (json<PushedSlotJson[]>(r.pushed) ?? []).map(pushedSlotOf);
  const schedule: ScheduleData = {
    pls: new Map(pl ? [[pl.id, pl]] : []),
    durations: durationData.durations,
    overrides: durationData.overrides,
    blocks: new Map(pl ? [[pl.id, parseWeeklyBlocks(r.blocks)]] : []),
    pushed: new Map(pl ? [[pl.id, pushed]] : []),
    holds: new Map(),
    timeOff: new Map(pl ? [[pl.providerId, (json<TimeOffJson[]>(r.time_off) ?? []).map(timeOffSpanOf)]] : []),
  };
  const effective = effectiveDurations(durationData, id, input.visitReasonId);
  return { pl, durations, effective, schedule, insurancePlanKnown: r.plan ?? undefined, insurancePlanInNetwork: r.in_network ?? undefined, versions: { directory: r.dv, calendar: r.cv } };
}
