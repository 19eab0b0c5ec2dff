/**
 * Booking (docs/api/appointments.md#create-an-appointment; docs/api/appointments.md#no-double-booking, docs/api/appointments.md#moves-the-service-makes): validates the request, checks the start
 * time against the schedule, and in one atomic statement stores the patient and the appointment, holds
 * the time (the database refuses an overlap: `conflict`), and writes the outbox event and the audit record.
 */
import type { CompiledQuery, Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { invalidFields, invalidInput, mergeFieldErrors, unavailable, type FieldError } from '../errors.js';
import type { Principal } from '../credentials/principal.js';
import { LocalClock } from '../scheduling/local-time.js';
import type { ProviderLocationContext } from '../scheduling/schedule-data.js';
import { effectiveDuration, loadDurations } from '../scheduling/visit-reason-durations.js';
import type { DateTime } from 'luxon';
import { bookingRefs, formatErrors, referenceErrors } from './booking-checks.js';
import { contextDay, contextOfRow, loadBookingContext, type BookingContext } from './booking-context.js';
import { BookingContextCache } from './booking-context-cache.js';
import { bookingStatement, type BookingRequest } from './booking-write.js';
import { coldBookingStatement, zoneDays, type ColdRow } from './cold-booking.js';
import { rowFromReturned } from '../../db/fast/appointment-row.js';
import { EVALUATE_EVERY_MOVE, type BookingOutcomePolicy } from './outcome-policy.js';
import { payerKind, type PatientInput } from './patient-rules.js';
import type { AppointmentRow } from './record.js';
import { retrying, slotTaken } from './transactions.js';

export interface CreateInput {
  appointment_type: 'providers';
  data: {
    start_time: string;
    visit_reason_id: string;
    provider_location_id: string;
    patient: PatientInput;
    patient_type: 'new' | 'existing';
    notes?: string;
  };
}

/**
 * Checks a visit reason exists, the provider accepts it and its practice offers it at `pl`; returns
 * its effective duration for the patient type there (docs/decisions/0019-practice-visit-reasons.md).
 */
export async function visitReasonDuration(
  db: Kysely<Database>,
  env: Principal['env'],
  pl: ProviderLocationContext,
  visitReasonId: string,
  patientType: 'new' | 'existing',
  field: string,
): Promise<number> {
  const data = await loadDurations(db, env, [pl.id], [visitReasonId]);
  if (!data.durations.has(visitReasonId)) throw invalidInput(field, `unknown visit reason ${visitReasonId}`);
  if (!pl.visitReasonIds.includes(visitReasonId)) throw invalidInput(field, 'the provider does not accept this visit reason');
  const minutes = effectiveDuration(data, pl.id, visitReasonId, patientType);
  if (minutes === undefined) throw invalidInput(field, 'the practice does not offer this visit reason at this provider location');
  return minutes;
}

/** Checks a booking request against a context; returns what the write needs, or throws one `invalid` error naming every bad field. */
function checkedBooking(
  d: CreateInput['data'],
  ctx: BookingContext,
  formatErrors: FieldError[],
  start: DateTime | undefined,
  now: Date,
  clock: LocalClock,
): { pl: ProviderLocationContext; duration: number } {
  const errors = mergeFieldErrors(formatErrors, referenceErrors(bookingRefs(d as unknown as Record<string, unknown>), ctx, start, now, clock));
  if (errors.length) throw invalidFields(errors);
  const duration = ctx.effective![d.patient_type];
  return { pl: ctx.pl!, duration };
}

/** The request's side of a booking's write. */
function request(d: CreateInput['data'], principal: Principal, start: Date, now: Date, outcomes: BookingOutcomePolicy, requestId: string | undefined): BookingRequest {
  return {
    principal,
    providerLocationId: d.provider_location_id,
    patient: d.patient,
    visitReasonId: d.visit_reason_id,
    patientType: d.patient_type,
    notes: d.notes,
    start,
    now,
    stayPending: outcomes.forcedOutcome(d.provider_location_id, 'booking') === 'stay_pending',
    ...(requestId ? { requestId } : {}),
  };
}

/** Runs a booking's write: its one row; serialization failures retried, a taken time answered `conflict`. */
async function write<R>(db: Kysely<Database>, q: CompiledQuery): Promise<R | undefined> {
  const { rows } = await retrying(() => db.executeQuery<R>(q)).catch((e: unknown) =>
    slotTaken(e, 'this start time is no longer available: another appointment holds it', 'data.start_time'),
  );
  return rows[0];
}

/** Attempts of the check-and-write loop: each after the directory or the calendar changed under the previous one. */
const WRITE_ATTEMPTS = 5;

/**
 * Creates an appointment; returns its row. Throws `DomainError`s (`invalid` naming the fields, `conflict` when the time is taken).
 * One statement when the request is valid: with a kept context (`contexts`, `BookingContextCache`), the
 * atomic insert; without one, the cold statement (cold-booking.ts), which reads the context and inserts
 * when SQL alone can tell the request is valid. Otherwise the context so read is checked here, as the
 * module comment says, and a valid request is written with the checked path's statement. With a kept context:
 * the insert checks the context's versions and inserts nothing if they moved, and a kept context's
 * refusal is checked again against a fresh one. Pass the application's long-lived `clock` to share
 * local-time conversions across requests. `outcomes`: the outcomes forced on bookings (none by default).
 */
export async function createAppointment(
  db: Kysely<Database>,
  principal: Principal,
  input: CreateInput,
  opts: {
    requestId?: string;
    now?: Date;
    clock?: LocalClock;
    statementTexts?: Map<string, string>;
    contexts?: BookingContextCache;
    outcomes?: BookingOutcomePolicy;
    /** False: a cold booking reads its context in a statement of its own (the A/B of bench/booking-write-costs.ts). */
    coldInOneStatement?: boolean;
  } = {},
): Promise<AppointmentRow> {
  const now = opts.now ?? new Date();
  const clock = opts.clock ?? new LocalClock();
  const statementTexts = opts.statementTexts ?? new Map<string, string>();
  const outcomes = opts.outcomes ?? EVALUATE_EVERY_MOVE;
  const d = input.data;
  const { errors: inputErrs, start } = formatErrors(d as unknown as Record<string, unknown>, now);
  const where = {
    providerLocationId: d.provider_location_id,
    visitReasonId: d.visit_reason_id,
    insurancePlanId: d.patient.insurance?.insurance_plan_id || undefined,
    day: contextDay(start ? start.toMillis() : now.getTime()),
  };
  const key = opts.contexts && start ? BookingContextCache.key(principal, where) : undefined;
  // The cold statement needs the start's local day in the provider-location's zone, which the clock
  // computes for the zones met so far (a booking in a zone not yet met is checked the two-statement way).
  const days = opts.contexts && opts.coldInOneStatement !== false && start && inputErrs.length === 0 ? zoneDays(clock, opts.contexts.zones, start.toMillis()) : [];
  for (let attempt = 1; ; attempt++) {
    const kept = key !== undefined ? opts.contexts!.get(key) : undefined;
    let ctx: BookingContext;
    if (kept) ctx = kept;
    else if (days.length > 0 && attempt === 1) {
      // One statement: the write when SQL alone can tell the request is valid, and the context when
      // nothing was written or it is worth keeping (cold-booking.ts).
      const wantContext = opts.contexts!.admit(key!);
      const r = (await write<ColdRow>(db, coldBookingStatement(statementTexts, request(d, principal, start!.toJSDate(), now, outcomes, opts.requestId), {
        where, days, hasInsurance: d.patient.insurance !== undefined, selfPay: payerKind(d.patient.insurance, undefined) === 'self_pay', wantContext,
      })))!;
      if (r.j) {
        if (r.dv !== null) opts.contexts!.set(key!, contextOfRow(r, where));
        return rowFromReturned(r.j, r.location_phone, r.location_phone_extension);
      }
      if (r.dv === null) throw new Error('the cold booking statement wrote nothing and read no context');
      ctx = contextOfRow(r, where);
    } else ctx = await loadBookingContext(db, principal, where);
    let checked: { pl: ProviderLocationContext; duration: number };
    try {
      checked = checkedBooking(d, ctx, inputErrs, start, now, clock);
    } catch (e) {
      // A kept context may be older than the change that makes this request valid: ask a fresh one.
      if (kept) {
        opts.contexts!.delete(key!);
        continue;
      }
      throw e;
    }
    if (key !== undefined && !kept) opts.contexts!.set(key, ctx);
    const { pl, duration } = checked;
    const startDate = start!.toJSDate();
    const endDate = new Date(startDate.getTime() + clock.durationMs(duration));
    const row = (await write<{ j: unknown[] }>(db, bookingStatement(statementTexts, {
      ...request(d, principal, startDate, now, outcomes, opts.requestId),
      pl,
      end: endDate,
      versions: ctx.versions,
    })))?.j;
    if (row) return rowFromReturned(row, pl.locationPhone, pl.locationPhoneExtension);
    // The directory or the provider's calendar changed since the context was read: read it again.
    if (key !== undefined) opts.contexts!.delete(key);
    if (attempt >= WRITE_ATTEMPTS) {
      throw unavailable("the provider's schedule kept changing during the booking; try again", 1);
    }
  }
}
