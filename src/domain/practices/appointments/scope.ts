/**
 * Which appointments a practice caller reaches (docs/decisions/0014-practice-workspace.md,
 * "Isolation"): those of the caller's practice (`appointments.practice_id`, set from the provider's
 * practice at booking), and for a provider user only their own provider's. Anything else is
 * `not_found`, never `forbidden`, so another practice's ids cannot be probed.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { LockedAppointment } from '../../appointments/lock.js';
import { forbidden, notFound } from '../../errors.js';
import { requirePracticeScope, type StaffPrincipal } from '../staff-principal.js';

/** `selectFrom('appointments')` restricted to what `staff` may see; works on a transaction too. */
export function practiceAppointments(db: Kysely<Database>, staff: StaffPrincipal) {
  let q = db.selectFrom('appointments').where('appointments.env', '=', staff.env).where('appointments.practice_id', '=', staff.practiceId);
  if (staff.role === 'provider') q = q.where('appointments.provider_id', '=', staff.providerId ?? '');
  return q;
}

/** Locks one of the practice's appointments for a change (`SELECT … FOR UPDATE`), or throws `not_found`. */
export async function lockPracticeAppointment(trx: Transaction<Database>, staff: StaffPrincipal, id: string): Promise<LockedAppointment> {
  const row = await practiceAppointments(trx, staff).selectAll('appointments').where('appointments.id', '=', id).forUpdate().executeTakeFirst();
  if (!row) throw notFound(`appointment ${id} not found`, 'appointment_id');
  return row;
}

/**
 * Throws `forbidden` unless the caller may move appointments: the `practice.write` scope, which a
 * provider user never holds (decision 0014, "Scopes"); checked again by role so a mis-issued token
 * cannot act.
 */
export function requireActingStaff(staff: StaffPrincipal): void {
  requirePracticeScope(staff, 'practice.write');
  if (staff.role === 'provider') throw forbidden('practice.write', 'a provider user may read their calendar but not change appointments');
}

/** Throws `forbidden` unless the caller may read the practice's appointments (`practice.read`). */
export function requireReadingStaff(staff: StaffPrincipal): void {
  requirePracticeScope(staff, 'practice.read');
}
