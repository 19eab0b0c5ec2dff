/**
 * Booking (docs/api/appointments.md#create-an-appointment; docs/api/appointments.md#no-double-booking, docs/api/appointments.md#moves-the-service-makes): validates the request, checks the start
 * time against the schedule, and in one atomic statement stores the patient and the appointment, holds
 * the time (the database refuses an overlap: `conflict`), and writes the outbox event and the audit record.
 */
import type { CompiledQuery, Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { invalidFields, invalidInput, mergeFieldErrors, unavailable, type FieldError } from '../errors.js';
import { prefixedId, uuid } from '../../lib/ids.js';
import type { Principal } from '../credentials/principal.js';
import { LocalClock } from '../scheduling/local-time.js';
import type { ProviderLocationContext } from '../scheduling/schedule-data.js';
import { effectiveDuration, loadDurations } from '../scheduling/visit-reason-durations.js';
import type { DateTime } from 'luxon';
import { bookingRefs, formatErrors, referenceErrors } from './booking-checks.js';
import { contextDay, loadBookingContext, type BookingContext, type ContextVersions } from './booking-context.js';
import { BookingContextCache } from './booking-context-cache.js';
import { auditRecord, outboxRecord } from './events.js';
import { rangeLiteral } from './holds.js';
import { APPOINTMENT_RETURNING, rowFromReturned } from '../../db/fast/appointment-row.js';
import { insertStatement, type InsertGuard } from '../../db/fast/insert-sql.js';
import { EVALUATE_EVERY_MOVE, type BookingOutcomePolicy } from './outcome-policy.js';
import type { PatientInput } from './patient-rules.js';
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

/** Attempts of the check-and-write loop: each after the directory or the calendar changed under the previous one. */
const WRITE_ATTEMPTS = 5;

/**
 * Creates an appointment; returns its row. Throws `DomainError`s (`invalid` naming the fields, `conflict` when the time is taken).
 * At most two statements: one read of everything the checks need (`loadBookingContext`), one atomic insert.
 * With `contexts`, a context kept from an earlier booking replaces the read (`BookingContextCache`):
 * the insert checks the context's versions and inserts nothing if they moved, and a kept context's
 * refusal is checked again against a fresh one. Pass the application's long-lived `clock` to share
 * local-time conversions across requests. `outcomes`: the outcomes forced on bookings (none by default).
 */
export async function createAppointment(
  db: Kysely<Database>,
  principal: Principal,
  input: CreateInput,
  opts: { requestId?: string; now?: Date; clock?: LocalClock; statementTexts?: Map<string, string>; contexts?: BookingContextCache; outcomes?: BookingOutcomePolicy } = {},
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
  for (let attempt = 1; ; attempt++) {
    const kept = key !== undefined ? opts.contexts!.get(key) : undefined;
    const ctx = kept ?? (await loadBookingContext(db, principal, where));
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
    const row = await retrying(async () => {
      const { rows } = await db.executeQuery<{ j: unknown[] }>(
        bookingStatement(statementTexts, {
          principal,
          pl,
          patient: d.patient,
          visitReasonId: d.visit_reason_id,
          patientType: d.patient_type,
          notes: d.notes,
          start: startDate,
          end: endDate,
          now,
          versions: ctx.versions,
          stayPending: outcomes.forcedOutcome(pl.id, 'booking') === 'stay_pending',
          ...(opts.requestId ? { requestId: opts.requestId } : {}),
        }),
      );
      return rows[0]?.j;
    }).catch((e: unknown) => slotTaken(e, 'this start time is no longer available: another appointment holds it', 'data.start_time'));
    if (row) return rowFromReturned(row, pl.locationPhone, pl.locationPhoneExtension);
    // The directory or the provider's calendar changed since the context was read: read it again.
    if (key !== undefined) opts.contexts!.delete(key);
    if (attempt >= WRITE_ATTEMPTS) {
      throw unavailable("the provider's schedule kept changing during the booking; try again", 1);
    }
  }
}

/** What `bookingStatement` writes: a booking its caller has already checked. */
export interface BookingWrite {
  principal: Principal;
  pl: ProviderLocationContext;
  patient: PatientInput;
  visitReasonId: string;
  patientType: 'new' | 'existing';
  notes?: string | undefined;
  start: Date;
  end: Date;
  now: Date;
  /** The versions the checks' context was read with: nothing is inserted unless they still hold. */
  versions: ContextVersions;
  /** The booking is never evaluated: it stays `pending_booking` (a forced outcome, outcome-policy.ts). */
  stayPending?: boolean;
  requestId?: string;
}

/** The booking statement's guard (migration 0010): the directory and the provider's calendar are as the context saw them. */
function versionGuard(env: string, providerId: string, v: ContextVersions): InsertGuard {
  return {
    name: 'context-versions',
    values: [v.directory, env, providerId, v.calendar],
    condition: (p) =>
      `(SELECT version FROM directory_version) = ${p(0)}::bigint ` +
      // FOR SHARE: a schedule change of this provider (time off, weekly hours) updates this row first and
      // holds it until it commits, so the booking waits for it and then sees the moved version (docs/scheduling.md, "Races").
      `AND coalesce((SELECT version FROM calendar_versions WHERE env = ${p(1)} AND provider_id = ${p(2)} FOR SHARE), 0) = ${p(3)}::bigint`,
  };
}

/**
 * The booking's one atomic statement (docs/api/appointments.md#no-double-booking, docs/api/webhooks.md#delivery-and-retries): the patient, the appointment, its held
 * time (the no-overlap constraint refuses a taken time: `conflict`), the outbox event and the audit record,
 * returning the appointment row as one JSON array (`APPOINTMENT_RETURNING`); no row and nothing
 * inserted when `versions` no longer hold (the directory or the provider's calendar changed).
 * Raw SQL (src/db/fast/insert-sql.ts): the query builder's cost for this statement was a large part of a
 * booking's CPU. Exported for the benchmark that measures this write on its own (the ceiling of
 * booking throughput).
 */
export function bookingStatement(statementTexts: Map<string, string>, w: BookingWrite): CompiledQuery {
  const { principal, pl, patient: p, start: startDate, end: endDate, now } = w;
  const manual = pl.confirmationType === 'manual';
  const neverEvaluated = w.stayPending === true;
  const id = uuid();
  const patientId = prefixedId('pa');
  const actor = { kind: 'principal' as const, principal, ...(w.requestId ? { requestId: w.requestId } : {}) };
  const change = { env: principal.env, developerId: principal.developerId, appointmentId: id, updateType: 'created' as const, changedAttributes: [], action: 'create' };
  return insertStatement(statementTexts, [
    ['patient', { table: 'patients', row: {
      id: patientId,
      env: principal.env,
      developer_id: principal.developerId,
      created_by_user_id: principal.kind === 'user' ? principal.userId : null,
      developer_patient_id: p.developer_patient_id ?? null,
      first_name: p.first_name,
      last_name: p.last_name,
      date_of_birth: p.date_of_birth,
      sex_at_birth: p.sex_at_birth,
      phone_number: p.phone_number,
      email_address: p.email_address,
      address: JSON.stringify(p.patient_address),
      insurance: p.insurance ? JSON.stringify(p.insurance) : null,
      gender: p.gender ?? null,
    } }],
    ['hold', { table: 'appointment_holds', row: {
      appointment_id: id, kind: 'current', env: principal.env, provider_id: pl.providerId, during: rangeLiteral(startDate, endDate),
    } }],
    ['event', { table: 'outbox_events', row: outboxRecord(actor, change) }],
    ['audit', { table: 'audit_log', row: auditRecord(actor, change) }],
  ], { table: 'appointments', row: {
      id,
      env: principal.env,
      developer_id: principal.developerId,
      booked_by_client_id: principal.clientId,
      booked_by_user_id: principal.kind === 'user' ? principal.userId : null,
      patient_id: patientId,
      developer_patient_id: p.developer_patient_id ?? null,
      provider_location_id: pl.id,
      provider_id: pl.providerId,
      location_id: pl.locationId,
      practice_id: pl.practiceId,
      visit_reason_id: w.visitReasonId,
      patient_type: w.patientType,
      start_time: startDate,
      end_time: endDate,
      time_zone: pl.timeZone,
      pending_start_time: null,
      pending_end_time: null,
      appointment_status: 'pending_booking',
      // docs/api/appointments.md#moves-the-service-makes: auto bookings are `pending_evaluation` until the evaluator decides.
      confirmation_type: manual ? 'manual' : 'pending_evaluation',
      visit_type: pl.visitType,
      is_provider_resource: pl.isProviderResource,
      notes: w.notes ?? null,
      cancellation_reason: null,
      cancellation_reason_type: null,
      arrived_at: null,
      evaluate_after: manual || neverEvaluated ? null : now,
  } }, APPOINTMENT_RETURNING, versionGuard(principal.env, pl.providerId, w.versions));
}
