/** Locks one visible appointment row for a change (`SELECT … FOR UPDATE`), or throws `not_found`. */
import type { Selectable, Transaction } from 'kysely';
import type { AppointmentsTable, Database } from '../../db/schema.js';
import { notFound } from '../errors.js';
import type { Principal } from '../credentials/principal.js';
import { visibleAppointments } from './visibility.js';

export type LockedAppointment = Selectable<AppointmentsTable>;

export async function lockVisible(trx: Transaction<Database>, principal: Principal, id: string, field = 'appointment_id'): Promise<LockedAppointment> {
  const row = await visibleAppointments(trx, principal).selectAll('appointments').where('appointments.id', '=', id).forUpdate().executeTakeFirst();
  if (!row) throw notFound(`appointment ${id} not found`, field);
  return row;
}

/** Locks an appointment by id in an environment, whoever booked it (operator and service moves). */
export async function lockAny(trx: Transaction<Database>, env: string, id: string): Promise<LockedAppointment> {
  const row = await trx.selectFrom('appointments').selectAll().where('env', '=', env as 'sandbox').where('id', '=', id).forUpdate().executeTakeFirst();
  if (!row) throw notFound(`appointment ${id} not found`, 'appointment_id');
  return row;
}
