/**
 * A cold booking in one statement (docs/decisions/0023-cold-booking-one-statement.md): a booking
 * whose context is not kept reads its context and writes in the same statement. The statement
 * inserts only when SQL alone can tell the request is valid: the provider-location is in the
 * caller's directory and active, the provider accepts the visit reason and the practice offers it
 * there (its effective duration), the insurance plan exists, the booking requirements and payer
 * kinds allow the request, and the schedule offers the start (`offeredStartSql`, which is sound but
 * not complete). It always answers the context it read (`contextColumnsSql`), so when it inserts
 * nothing the booking checks that context in JavaScript, as a two-statement booking would, and
 * answers the precise error or writes with the checked path's statement.
 *
 * The calendar version is read twice: in the statement's snapshot with the context, and `FOR SHARE`
 * in the guard, which waits for a schedule change of the provider in progress and then sees its
 * version (docs/scheduling.md, "Races"); a difference inserts nothing.
 */
import { sql, type CompiledQuery } from 'kysely';
import { fromGuard, insertStatement } from '../../db/fast/insert-sql.js';
import { APPOINTMENT_RETURNING } from '../../db/fast/appointment-row.js';
import { statementTemplate } from '../../db/fast/statement-template.js';
import { bookingHorizonEndMs } from '../availability/slots.js';
import { offeredStartSql } from '../availability/offered-start-sql.js';
import type { LocalClock } from '../scheduling/local-time.js';
import { effectiveMinutesSql } from '../scheduling/visit-reason-durations.js';
import { CONTEXT_SLOTS, calendarVersionSql, contextColumnsSql, contextPlSql, planInNetworkSql, planKnownSql, contextValues, type ContextRow, type ContextWhere } from './booking-context.js';
import { bookingParts, type BookingRequest, type Placement } from './booking-write.js';

/** The cold statement's slots: the context's and the request's. */
const COLD_SLOTS = [
  ...CONTEXT_SLOTS, 'reason', 'patientType', 'start', 'now', 'horizon', 'hasInsurance', 'selfPay', 'stayPending',
  'zones', 'days', 'weekdays', 'dayStarts', 'wantContext',
] as const;

/** The CTEs before the inserts: `pl`, `"_ctx"` (the context) and `"_guard"` (one row when SQL accepts the booking). */
function coldPrelude(withPlan: boolean) {
  return statementTemplate(COLD_SLOTS, (p) => sql`
    pl AS (${contextPlSql(p)}),
    "_guard" AS (
      SELECT pl.provider_id, pl.location_id, pl.practice_id, pl.time_zone, pl.visit_type, pl.is_provider_resource, pl.phone_number, pl.phone_extension,
             CASE WHEN pl.confirmation_type = 'manual' THEN 'manual' ELSE 'pending_evaluation' END AS confirmation_type,
             CASE WHEN pl.confirmation_type = 'manual' OR ${p.stayPending}::boolean THEN NULL ELSE ${p.now}::timestamptz END AS evaluate_after,
             e.end_time, tstzrange(${p.start}::timestamptz, e.end_time, '[)') AS during
      FROM pl
      -- The start's local day in the provider-location's zone, as the service's clock computed it (plain days only).
      JOIN unnest(${p.zones}::text[], ${p.days}::date[], ${p.weekdays}::int[], ${p.dayStarts}::timestamptz[]) AS z(zone, day, weekday, day_start)
        ON z.zone = pl.time_zone
      CROSS JOIN LATERAL (SELECT ${effectiveMinutesSql(p.env, sql.ref('pl.id'), p.reason, p.patientType)} AS minutes OFFSET 0) d
      CROSS JOIN LATERAL (SELECT ${p.start}::timestamptz + make_interval(mins => d.minutes) AS end_time) e
      WHERE pl.active
        AND ${p.reason}::text = ANY(pl.visit_reason_ids)
        AND ${planKnownSql(p, withPlan)} IS NOT FALSE
        AND (NOT ('patient.insurance' = ANY(pl.required_fields)) OR ${p.hasInsurance}::boolean)
        AND (CASE WHEN ${p.selfPay}::boolean THEN 'self_pay' WHEN ${planInNetworkSql(p, withPlan)} THEN 'in_network' ELSE 'out_of_network' END)
              = ANY(pl.accepts_booking_requests_from)
        AND ${offeredStartSql({
          env: p.env,
          providerLocationId: sql.ref('pl.id'),
          providerId: sql.ref('pl.provider_id'),
          locationId: sql.ref('pl.location_id'),
          visitReasonId: p.reason,
          patientType: p.patientType,
          start: p.start,
          minutes: sql.ref('d.minutes'),
          now: p.now,
          horizon: p.horizon,
          day: sql.ref('z.day'),
          weekday: sql.ref('z.weekday'),
          dayStart: sql.ref('z.day_start'),
        })}
        AND coalesce((SELECT cv.version FROM calendar_versions cv WHERE cv.env = ${p.env} AND cv.provider_id = pl.provider_id FOR SHARE), 0)::text = ${calendarVersionSql(p)}
    ),
    -- The context, read only when it is wanted (to keep) or nothing is inserted (the checks need it).
    "_ctx" AS (SELECT ${contextColumnsSql(p, withPlan)} WHERE ${p.wantContext}::boolean OR NOT EXISTS (SELECT 1 FROM "_guard"))`);
}

const WITH_PLAN = coldPrelude(true);
const WITHOUT_PLAN = coldPrelude(false);

/** Every placement column, read from `"_guard"`. */
const FROM_GUARD: Placement = {
  providerId: fromGuard('provider_id'),
  locationId: fromGuard('location_id'),
  practiceId: fromGuard('practice_id'),
  timeZone: fromGuard('time_zone'),
  visitType: fromGuard('visit_type'),
  isProviderResource: fromGuard('is_provider_resource'),
  confirmationType: fromGuard('confirmation_type'),
  evaluateAfter: fromGuard('evaluate_after'),
  end: fromGuard('end_time'),
  during: fromGuard('during'),
};

/**
 * The cold statement's one row: the new appointment (`j`, null when nothing was inserted) with its
 * location's phone, and the context (its columns null when it was not read: written, and not wanted).
 */
export type ColdRow = { j: unknown[] | null; location_phone: string | null; location_phone_extension: string | null } & (
  | ContextRow
  | { [K in keyof ContextRow]: null }
);

/** A start's local day in one zone: its date, ISO weekday and first instant. */
export interface ZoneDay {
  zone: string;
  date: string;
  weekday: number;
  startMs: number;
}

/** The local day of instant `ms` in each of `zones` where that day is plain (`LocalClock.plainDay`). */
export function zoneDays(clock: LocalClock, zones: Iterable<string>, ms: number): ZoneDay[] {
  const out: ZoneDay[] = [];
  for (const zone of zones) {
    const d = clock.plainDay(zone, ms);
    if (d) out.push({ zone, date: d.date, weekday: clock.day(d.date).weekday, startMs: d.startMs });
  }
  return out;
}

/** What SQL needs to know of the request beyond its rows: its insurance as the checks read it (`referenceErrors`). */
export interface ColdFacts {
  where: ContextWhere;
  /** The start's local day in each zone the caller knows where that day is plain (`LocalClock.plainDay`). */
  days: ZoneDay[];
  hasInsurance: boolean;
  /** The payer kind is `self_pay` whatever the plan's network (`payerKind`). */
  selfPay: boolean;
  /** Read and answer the context even when the booking is written (to keep it: `BookingContextCache.admit`). */
  wantContext: boolean;
}

/** The one statement of a cold booking (module comment). */
export function coldBookingStatement(statementTexts: Map<string, string>, w: BookingRequest, facts: ColdFacts): CompiledQuery {
  const template = facts.where.insurancePlanId !== undefined ? WITH_PLAN : WITHOUT_PLAN;
  const prelude = template({
    ...contextValues(w.principal, facts.where),
    reason: w.visitReasonId,
    patientType: w.patientType,
    start: w.start,
    now: w.now,
    horizon: new Date(bookingHorizonEndMs(w.now.getTime())),
    hasInsurance: facts.hasInsurance,
    selfPay: facts.selfPay,
    stayPending: w.stayPending === true,
    zones: facts.days.map((d) => d.zone),
    days: facts.days.map((d) => d.date),
    weekdays: facts.days.map((d) => d.weekday),
    dayStarts: facts.days.map((d) => new Date(d.startMs)),
    wantContext: facts.wantContext,
  });
  const { ctes, last } = bookingParts(w, FROM_GUARD);
  return insertStatement(statementTexts, ctes, last, APPOINTMENT_RETURNING, {
    name: template === WITH_PLAN ? 'cold+plan' : 'cold',
    values: [...prelude.parameters],
    text: prelude.sql,
    final: `SELECT (SELECT j FROM "_last") AS j, (SELECT phone_number FROM "_guard") AS location_phone,
      (SELECT phone_extension FROM "_guard") AS location_phone_extension, c.* FROM (SELECT) o LEFT JOIN "_ctx" c ON true`,
  });
}
