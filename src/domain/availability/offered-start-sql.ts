/**
 * Whether a start time is offered, decided in SQL, for a statement that must decide without a round
 * trip first (a cold booking: src/domain/appointments/cold-booking.ts;
 * docs/decisions/0023-cold-booking-one-statement.md). `offersStart` (scheduled-start.ts) stays the
 * rule: this predicate is **sound, not complete**. It is true only for a start `offersStart` accepts
 * on the same data, and false (or NULL) for anything it cannot decide exactly, which its caller then
 * hands to `offersStart`:
 *
 * - it is given the start's local day by the caller, and only for a plain day (`LocalClock.plainDay`:
 *   24 hours, one UTC offset), whose local times are its first instant plus their minutes. So SQL
 *   converts no time zone at all: Luxon stays the one authority on zones, and a daylight-saving day
 *   is never decided here;
 * - a start within a day of any time off of the provider there (the overlap is left to `offersStart`).
 *
 * Otherwise it is the slot rule of `walkSlots` (slots.ts) for one start, ignoring held time (the
 * no-overlap constraint decides that): after `now` and within the booking horizon, and either on a
 * weekly block of the start's local weekday that takes the patient type and visit reason, a whole
 * number of durations after the block's start (whole minutes, as the walk reads them) and ending
 * inside it, or at a calendar timeslot of that local date that takes them. The property test
 * (test/scheduling/offered-start-sql.test.ts) checks it against `offersStart` in many zones.
 */
import { sql, type RawBuilder } from 'kysely';

// Each lookup is a scalar subquery with LIMIT 1, not EXISTS: PostgreSQL may turn an EXISTS under OR
// into a hashed subplan that reads every calendar timeslot of the environment at that instant, and
// a NOT EXISTS into an anti join on whatever index looks cheapest; a LIMIT keeps each one a lookup
// by the provider's keys.

/** What the predicate reads: SQL values (parameters, or column references of the enclosing statement). */
export interface OfferedStartArgs {
  env: unknown;
  providerLocationId: unknown;
  providerId: unknown;
  locationId: unknown;
  visitReasonId: unknown;
  patientType: unknown;
  /** The start (`timestamptz`). */
  start: unknown;
  /** The visit's effective duration in minutes (NULL: not offered). */
  minutes: unknown;
  /** Now, and the last instant a slot may start at (`bookingHorizonEndMs`), as `timestamptz`. */
  now: unknown;
  horizon: unknown;
  /** The start's local date (`date`), its ISO weekday and its first instant (`timestamptz`): a plain day (module comment). */
  day: unknown;
  weekday: unknown;
  dayStart: unknown;
}

/** Minutes after midnight of a `time` column, seconds dropped as the walk drops them (`parseWeeklyBlocks`). */
const minutesOf = (column: string) => sql.raw(`(extract(hour FROM ${column}) * 60 + extract(minute FROM ${column}))::int`);

/** The sound SQL test of `offersStart` described in the module comment. */
export function offeredStartSql(a: OfferedStartArgs): RawBuilder<boolean> {
  const start = sql`${a.start}::timestamptz`;
  const day = sql`${a.day}::date`;
  const dayStart = sql`${a.dayStart}::timestamptz`;
  return sql<boolean>`(
    ${a.minutes}::int > 0
    AND ${start} > ${a.now}::timestamptz AND ${start} <= ${a.horizon}::timestamptz
    AND (
      SELECT 1 FROM time_off t
      WHERE t.env = ${a.env} AND t.provider_id = ${a.providerId}
        AND (t.provider_location_id IS NULL OR t.provider_location_id = ${a.providerLocationId})
        AND t.start_date <= ${day} + 1 AND t.end_date >= ${day} - 1
      LIMIT 1) IS NULL
    AND (
      (
        SELECT true FROM weekly_schedules ws
        WHERE ws.env = ${a.env} AND ws.provider_location_id = ${a.providerLocationId}
          AND ws.weekday = ${a.weekday}::int
          AND (ws.patient_type IS NULL OR ws.patient_type = ${a.patientType}::text)
          AND (ws.visit_reason_ids IS NULL OR cardinality(ws.visit_reason_ids) = 0 OR ${a.visitReasonId}::text = ANY(ws.visit_reason_ids))
          AND ${start} >= ${dayStart} + make_interval(mins => ${minutesOf('ws.start_local')})
          AND ${start} + make_interval(mins => ${a.minutes}::int) <= ${dayStart} + make_interval(mins => ${minutesOf('ws.end_local')})
          AND mod(extract(epoch FROM ${start} - ${dayStart}), 60) = 0
          AND mod(extract(epoch FROM ${start} - ${dayStart}) / 60 - ${minutesOf('ws.start_local')}, ${a.minutes}::int) = 0
        LIMIT 1) IS NOT NULL
      OR (
        SELECT true FROM calendar_timeslots ct
        WHERE ct.env = ${a.env} AND ct.provider_id = ${a.providerId} AND ct.location_id = ${a.locationId}
          AND ct.start_utc = ${start} AND ct.local_date = ${day}
          AND (ct.patient_type IS NULL OR ct.patient_type = ${a.patientType}::text)
          AND NOT (${a.visitReasonId}::text = ANY(coalesce(ct.excluded_visit_reason_ids, '{}')))
          AND (ct.allowed_visit_reason_ids IS NULL OR cardinality(ct.allowed_visit_reason_ids) = 0
               OR ${a.visitReasonId}::text = ANY(ct.allowed_visit_reason_ids))
        LIMIT 1) IS NOT NULL))`;
}
