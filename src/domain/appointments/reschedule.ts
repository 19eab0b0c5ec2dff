/**
 * `POST /v1/appointments/reschedule` (docs/api/README.md#operations, docs/api/appointments.md#lifecycle; docs/api/appointments.md#reschedule, docs/api/appointments.md#moves-the-service-makes): only the time
 * changes. The new time must be offered by the schedule (`invalid` `start_time`) and free (`conflict`); the
 * appointment becomes `pending_reschedule` holding the new time next to its current one, and the
 * evaluator later moves it to `rescheduled` (old time released) or `reschedule_failed` (old time kept).
 */
import { sql, type Kysely } from 'kysely';
import { APPOINTMENT_ARRAY, rowFromReturned } from '../../db/fast/appointment-row.js';
import type { Database } from '../../db/schema.js';
import { invalidFields, notFound, type FieldError } from '../errors.js';
import type { DateTime } from 'luxon';
import type { Principal } from '../credentials/principal.js';
import { isScheduledStart } from '../availability/scheduled-start.js';
import { LocalClock, parseOffsetDateTime } from '../scheduling/local-time.js';
import { withChangeRecorded, type Actor, type ChangeRecord } from './events.js';
import { pendingHoldQuery } from './holds.js';
import { lockVisible } from './lock.js';
import { moveTarget, offeredUnderCalendarLock, type MoveTarget } from './move-check.js';
import { EVALUATE_EVERY_MOVE, type BookingOutcomePolicy } from './outcome-policy.js';
import type { AppointmentRow } from './record.js';
import { assertMove } from './states.js';
import { inTransaction, slotTaken } from './transactions.js';
import { visibleAppointments } from './visibility.js';

export interface RescheduleInput {
  appointment_id: string;
  start_time: string;
}

/** What a reschedule's checks found: the new time, its duration, or the error naming `start_time`. */
type StartCheck =
  | (Extract<MoveTarget, { ok: true }> & { start: DateTime; current: { visit_reason_id: string; patient_type: 'new' | 'existing' } })
  | Extract<MoveTarget, { ok: false }>;

const NOT_OFFERED: FieldError = { field: 'start_time', message: 'is not a start time the availability endpoint offers for this appointment' };

const BAD_FORMAT: FieldError = { field: 'start_time', message: 'must be an ISO-8601 date-time with a UTC offset' };

/**
 * Checks a new start time for a visible appointment, all but the schedule: its form, that the
 * appointment exists (`not_found`) and may move (`conflict`), and its provider-location
 * (`moveTarget`). Read outside any transaction, for `rescheduleProblems`; a reschedule makes the
 * same checks on the locked row.
 */
async function checkTarget(db: Kysely<Database>, principal: Principal, appointmentId: string, startTime: string): Promise<StartCheck> {
  const start = parseOffsetDateTime(startTime);
  if (!start) return { ok: false, error: BAD_FORMAT };
  const current = await visibleAppointments(db, principal)
    .select(['appointments.provider_location_id', 'appointments.visit_reason_id', 'appointments.patient_type', 'appointments.appointment_status'])
    .where('appointments.id', '=', appointmentId)
    .executeTakeFirst();
  if (!current) throw notFound(`appointment ${appointmentId} not found`, 'appointment_id');
  assertMove('reschedule', current.appointment_status);
  const target = await moveTarget(db, principal.env, current, 'visit_reason_id');
  return target.ok ? { ...target, start, current } : target;
}

/** `checkTarget`, and that the schedule offers the time (`invalid` naming `start_time`). */
async function checkStart(db: Kysely<Database>, principal: Principal, appointmentId: string, startTime: string, now: Date): Promise<StartCheck> {
  const checked = await checkTarget(db, principal, appointmentId, startTime);
  if (!checked.ok) return checked;
  const { pl, current, start } = checked;
  const offered = await isScheduledStart(db, { env: principal.env, pl, visitReasonId: current.visit_reason_id, patientType: current.patient_type, startMs: start.toMillis(), now });
  return offered ? checked : { ok: false, error: NOT_OFFERED };
}

/**
 * The `start_time` error of a reschedule body the schema refused (docs/api/errors.md,
 * "Validation"), when it names an appointment and a time; none otherwise. Writes nothing.
 */
export async function rescheduleProblems(db: Kysely<Database>, principal: Principal, body: unknown, now = new Date()): Promise<FieldError[]> {
  const b = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  if (typeof b.start_time !== 'string') return [];
  if (typeof b.appointment_id !== 'string' || !b.appointment_id) {
    return parseOffsetDateTime(b.start_time) ? [] : [{ field: 'start_time', message: 'must be an ISO-8601 date-time with a UTC offset' }];
  }
  const checked = await checkStart(db, principal, b.appointment_id, b.start_time, now);
  return checked.ok ? [] : [checked.error];
}

export async function rescheduleAppointment(
  db: Kysely<Database>,
  principal: Principal,
  input: RescheduleInput,
  opts: { requestId?: string; now?: Date; outcomes?: BookingOutcomePolicy; clock?: LocalClock } = {},
): Promise<AppointmentRow> {
  const now = opts.now ?? new Date();
  const clock = opts.clock ?? new LocalClock();
  const start = parseOffsetDateTime(input.start_time);
  if (!start) throw invalidFields([BAD_FORMAT]);

  const moved = await inTransaction(db, async (trx) => {
    // Everything the move needs is read under the appointment's lock: the row itself, its
    // provider-location and duration, and (move-check.ts) the schedule; nothing before it.
    const row = await lockVisible(trx, principal, input.appointment_id);
    assertMove('reschedule', row.appointment_status);
    const target = await moveTarget(trx, principal.env, row, 'visit_reason_id');
    if (!target.ok) throw invalidFields([target.error]);
    const { duration, pl } = target;
    const newStart = start.toJSDate();
    const newEnd = start.plus({ minutes: duration }).toJSDate();
    if (!(await offeredUnderCalendarLock(trx, row, pl, start.toMillis(), { now, clock }))) throw invalidFields([NOT_OFFERED]);
    // One statement: the new time held as the pending one (replacing a pending time the appointment
    // held), the event and the audit row, and the appointment's update with the record it answers.
    const actor: Actor = { kind: 'principal', principal, ...(opts.requestId ? { requestId: opts.requestId } : {}) };
    const change: ChangeRecord = {
      env: row.env, developerId: row.developer_id, appointmentId: row.id, updateType: 'updated',
      changedAttributes: ['appointment.status'], action: 'reschedule',
    };
    let updated: { j: unknown[] };
    try {
      const held = trx.with('held', (qc) => pendingHoldQuery(qc, { appointmentId: row.id, env: row.env, providerId: row.provider_id, start: newStart, end: newEnd }));
      updated = await withChangeRecorded(held, actor, change)
        .updateTable('appointments')
        .set({
          appointment_status: 'pending_reschedule',
          pending_start_time: newStart,
          pending_end_time: newEnd,
          evaluate_after: (opts.outcomes ?? EVALUATE_EVERY_MOVE).forcedOutcome(row.provider_location_id, 'reschedule') === 'stay_pending' ? null : now,
          updated_at: sql`now()`,
        })
        .where('id', '=', row.id)
        .returning(sql.raw<unknown[]>(APPOINTMENT_ARRAY).as('j'))
        .executeTakeFirstOrThrow();
    } catch (e) {
      slotTaken(e, 'this start time is no longer available: another appointment holds it', 'start_time');
    }
    return { j: updated.j, pl };
  });
  // The record as this transaction left it (the location is the provider-location's).
  return rowFromReturned(moved.j, moved.pl.locationPhone, moved.pl.locationPhoneExtension);
}

