/**
 * The moves the service (evaluator) and the operator make (docs/api/admin.md#appointment-transitions `appointment transition`, docs/api/appointments.md#moves-the-service-makes): confirm or fail a booking, resolve a reschedule. Each runs on a locked row inside the
 * caller's transaction and writes its outbox event (delivered: not the developer's own call). The
 * evaluator makes the same moves for a whole batch in one statement (evaluator-apply.ts), with the
 * same events and audit rows (`moveChange`).
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { recordChange, type Actor, type ChangeRecord } from './events.js';
import { release } from './holds.js';
import type { LockedAppointment } from './lock.js';

/** A move of this module (the status it ends in). */
export type ServiceMove = 'confirmed' | 'booking_failed' | 'rescheduled' | 'reschedule_failed';

/** What the moves read of the locked row. */
export type MovedAppointment = Pick<
  LockedAppointment,
  'id' | 'env' | 'developer_id' | 'confirmation_type' | 'start_time' | 'end_time' | 'pending_start_time' | 'pending_end_time'
>;

const actionOf = (actor: Actor, what: string) => `${actor.kind === 'service' ? 'evaluate' : actor.kind === 'staff' ? 'staff' : 'operator'}:${what}`;

/** The webhook event and audit action of `move` of `row` by `actor` (what `recordChange` writes for it). */
export function moveChange(actor: Actor, row: MovedAppointment, move: ServiceMove): ChangeRecord {
  const changed =
    move === 'confirmed'
      ? row.confirmation_type === 'pending_evaluation' ? ['appointment.status', 'appointment.confirmation_type'] : ['appointment.status']
      : move === 'rescheduled' ? ['appointment.status', 'appointment.start_time'] : ['appointment.status'];
  return {
    env: row.env, developerId: row.developer_id, appointmentId: row.id, updateType: 'updated', changedAttributes: changed, action: actionOf(actor, move),
  };
}

/** pending_booking → confirmed (`pending_evaluation` becomes `auto`). */
export async function applyConfirmed(trx: Transaction<Database>, row: MovedAppointment, actor: Actor): Promise<void> {
  await trx
    .updateTable('appointments')
    .set({
      appointment_status: 'confirmed',
      confirmation_type: row.confirmation_type === 'pending_evaluation' ? 'auto' : row.confirmation_type,
      evaluate_after: null,
      updated_at: sql`now()`,
    })
    .where('id', '=', row.id)
    .execute();
  await recordChange(trx, actor, moveChange(actor, row, 'confirmed'));
}

/** pending_booking → booking_failed; the time is released. */
export async function applyBookingFailed(trx: Transaction<Database>, row: MovedAppointment, actor: Actor): Promise<void> {
  await release(trx, row.id);
  await trx
    .updateTable('appointments')
    .set({
      appointment_status: 'booking_failed',
      confirmation_type: row.confirmation_type === 'pending_evaluation' ? 'auto' : row.confirmation_type,
      evaluate_after: null,
      updated_at: sql`now()`,
    })
    .where('id', '=', row.id)
    .execute();
  await recordChange(trx, actor, moveChange(actor, row, 'booking_failed'));
}

/** pending_reschedule → rescheduled: the new time becomes current, the old time is released. */
export async function applyRescheduled(trx: Transaction<Database>, row: MovedAppointment, actor: Actor): Promise<void> {
  await release(trx, row.id, 'current');
  await trx.updateTable('appointment_holds').set({ kind: 'current' }).where('appointment_id', '=', row.id).where('kind', '=', 'pending').execute();
  await trx
    .updateTable('appointments')
    .set({
      appointment_status: 'rescheduled',
      start_time: row.pending_start_time ?? row.start_time,
      end_time: row.pending_end_time ?? row.end_time,
      pending_start_time: null,
      pending_end_time: null,
      evaluate_after: null,
      updated_at: sql`now()`,
    })
    .where('id', '=', row.id)
    .execute();
  await recordChange(trx, actor, moveChange(actor, row, 'rescheduled'));
}

/** pending_reschedule → reschedule_failed: the new time is released, the old time kept. */
export async function applyRescheduleFailed(trx: Transaction<Database>, row: MovedAppointment, actor: Actor): Promise<void> {
  await release(trx, row.id, 'pending');
  await trx
    .updateTable('appointments')
    .set({ appointment_status: 'reschedule_failed', pending_start_time: null, pending_end_time: null, evaluate_after: null, updated_at: sql`now()` })
    .where('id', '=', row.id)
    .execute();
  await recordChange(trx, actor, moveChange(actor, row, 'reschedule_failed'));
}
