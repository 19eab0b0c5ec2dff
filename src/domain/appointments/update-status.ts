/**
 * `PUT /v1/appointments/update-status` (docs/api/appointments.md#arrived-and-no-show, docs/api/appointments.md#lifecycle, docs/api/conventions.md#limits; docs/api/appointments.md#moves-the-service-makes): `arrived` is
 * recorded on the appointment (its status does not change); `no_show` only when the start time is in
 * the past and at most 2 days old, otherwise a `conflict` naming the current status. Both are allowed from any
 * status. A `no_show` appointment is live (docs/api/appointments.md#no-double-booking), so marking a cancelled or failed
 * booking `no_show` holds its time again; when another appointment holds that time now, a `conflict`.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { DateTime } from 'luxon';
import type { Database } from '../../db/schema.js';
import { conflict } from '../errors.js';
import type { Principal } from '../credentials/principal.js';
import { recordChange, type Actor } from './events.js';
import { hold, release } from './holds.js';
import { lockVisible, type LockedAppointment } from './lock.js';
import { statusFields } from './record.js';
import { assertMove } from './states.js';
import { inTransaction, slotTaken } from './transactions.js';

export interface UpdateStatusInput {
  appointment_id: string;
  appointment_status: 'arrived' | 'no_show';
}

export async function updateAppointmentStatus(
  db: Kysely<Database>,
  principal: Principal,
  input: UpdateStatusInput,
  opts: { requestId?: string; now?: Date } = {},
) {
  const actor: Actor = { kind: 'principal' as const, principal, ...(opts.requestId ? { requestId: opts.requestId } : {}) };
  return inTransaction(db, async (trx) => {
    const row = await lockVisible(trx, principal, input.appointment_id);
    return applyStatusUpdate(trx, row, actor, input.appointment_status, opts.now);
  });
}

/**
 * `arrived` or `no_show` on a locked row, with its event (see the module comment); shared by
 * update-status and the practice's moves (docs/decisions/0014-practice-workspace.md, "One set of rules").
 */
export async function applyStatusUpdate(
  trx: Transaction<Database>,
  row: LockedAppointment,
  actor: Actor,
  status: UpdateStatusInput['appointment_status'],
  at?: Date,
) {
  const now = DateTime.fromJSDate(at ?? new Date());
  if (status === 'arrived') {
    assertMove('arrived', row.appointment_status);
    await trx.updateTable('appointments').set({ arrived_at: now.toJSDate(), updated_at: sql`now()` }).where('id', '=', row.id).execute();
    await recordChange(trx, actor, {
      env: row.env, developerId: row.developer_id, appointmentId: row.id, updateType: 'updated',
      changedAttributes: ['appointment.arrived'], action: 'arrived',
    });
    return statusFields(row);
  }
  assertMove('no_show', row.appointment_status);
  const start = DateTime.fromJSDate(row.start_time);
  if (start >= now) {
    throw conflict(`no_show can be recorded only after the start time; current status is ${row.appointment_status}`, 'appointment_status');
  }
  if (start < now.minus({ days: 2 })) {
    throw conflict(`no_show can be recorded at most 2 days after the start time; current status is ${row.appointment_status}`, 'appointment_status');
  }
  // A pending reschedule is abandoned: its new time is released.
  if (row.appointment_status === 'pending_reschedule') await release(trx, row.id, 'pending');
  // A released booking becomes live again: it holds its time, unless someone else holds it now.
  if (row.appointment_status === 'cancelled' || row.appointment_status === 'booking_failed') {
    await hold(trx, { appointmentId: row.id, kind: 'current', env: row.env, providerId: row.provider_id, start: row.start_time, end: row.end_time })
      .catch((e: unknown) => slotTaken(e, `its time is held by another appointment now; current status is ${row.appointment_status}`, 'appointment_status'));
  }
  const updated = await trx
    .updateTable('appointments')
    .set({ appointment_status: 'no_show', evaluate_after: null, pending_start_time: null, pending_end_time: null, updated_at: sql`now()` })
    .where('id', '=', row.id)
    .returning(['id', 'appointment_status', 'developer_patient_id'])
    .executeTakeFirstOrThrow();
  if (row.appointment_status !== 'no_show') {
    await recordChange(trx, actor, {
      env: row.env, developerId: row.developer_id, appointmentId: row.id, updateType: 'updated',
      changedAttributes: ['appointment.status'], action: 'no_show',
    });
  }
  return statusFields(updated);
}
