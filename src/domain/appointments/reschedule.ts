/**
 * `POST /v1/appointments/reschedule` (interface.md §4.16, §3; contracts.md §4, §6): only the time
 * changes. The new time must be offered by the schedule (400 `start_time`) and free (409); the
 * appointment becomes `pending_reschedule` holding the new time next to its current one, and the
 * evaluator later moves it to `rescheduled` (old time released) or `reschedule_failed` (old time kept).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { badRequest, notFound } from '../errors.js';
import type { Principal } from '../credentials/principal.js';
import { SANDBOX_FIXTURES } from '../directory/sandbox-fixtures.js';
import { isScheduledStart } from '../scheduling/availability.js';
import { parseOffsetDateTime } from '../scheduling/local-time.js';
import { loadProviderLocations } from '../scheduling/schedule-data.js';
import { visitReasonDuration } from './create.js';
import { recordChange } from './events.js';
import { hold, release } from './holds.js';
import { lockVisible } from './lock.js';
import { findVisible, type AppointmentRow } from './record.js';
import { assertMove } from './states.js';
import { inTransaction, slotTaken } from './transactions.js';
import { visibleAppointments } from './visibility.js';

export interface RescheduleInput {
  appointment_id: string;
  start_time: string;
}

export async function rescheduleAppointment(
  db: Kysely<Database>,
  principal: Principal,
  input: RescheduleInput,
  opts: { requestId?: string; now?: Date } = {},
): Promise<AppointmentRow> {
  const now = opts.now ?? new Date();
  const start = parseOffsetDateTime(input.start_time);
  if (!start) throw badRequest('start_time', 'must be an ISO-8601 date-time with a UTC offset');
  // Read outside the transaction what the schedule check needs; the status is re-checked under lock.
  const current = await visibleAppointments(db, principal)
    .select(['appointments.provider_location_id', 'appointments.visit_reason_id', 'appointments.patient_type', 'appointments.appointment_status'])
    .where('appointments.id', '=', input.appointment_id)
    .executeTakeFirst();
  if (!current) throw notFound(`appointment ${input.appointment_id} not found`, 'appointment_id');
  assertMove('reschedule', current.appointment_status);
  const pl = (await loadProviderLocations(db, principal.env, [current.provider_location_id])).get(current.provider_location_id);
  if (!pl?.active) throw badRequest('start_time', 'the provider location no longer takes bookings');
  const duration = await visitReasonDuration(db, principal.env, pl, current.visit_reason_id, current.patient_type, 'visit_reason_id');
  const startMs = start.toMillis();
  if (!(await isScheduledStart(db, { env: principal.env, pl, visitReasonId: current.visit_reason_id, patientType: current.patient_type, startMs, now }))) {
    throw badRequest('start_time', 'is not a start time the availability endpoint offers for this appointment');
  }
  const newStart = start.toJSDate();
  const newEnd = start.plus({ minutes: duration }).toJSDate();

  await inTransaction(db, async (trx) => {
    const row = await lockVisible(trx, principal, input.appointment_id);
    assertMove('reschedule', row.appointment_status);
    await release(trx, row.id, 'pending');
    try {
      await hold(trx, { appointmentId: row.id, kind: 'pending', env: row.env, providerId: row.provider_id, start: newStart, end: newEnd });
    } catch (e) {
      slotTaken(e, 'this start time is no longer available: another appointment holds it', 'start_time');
    }
    await trx
      .updateTable('appointments')
      .set({
        appointment_status: 'pending_reschedule',
        pending_start_time: newStart,
        pending_end_time: newEnd,
        evaluate_after: row.provider_location_id === SANDBOX_FIXTURES.pending ? null : now,
        updated_at: sql`now()`,
      })
      .where('id', '=', row.id)
      .execute();
    await recordChange(trx, { kind: 'principal', principal, ...(opts.requestId ? { requestId: opts.requestId } : {}) }, {
      env: row.env, developerId: row.developer_id, appointmentId: row.id, updateType: 'updated',
      changedAttributes: ['appointment.status'], action: 'reschedule',
    });
  });
  return (await findVisible(db, principal, input.appointment_id))!;
}

