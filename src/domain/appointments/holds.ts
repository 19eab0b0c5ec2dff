/**
 * Holding and releasing a provider's time (docs/api/appointments.md#no-double-booking): a row in `appointment_holds` is held
 * time; the database's exclusion constraint refuses two appointments' overlapping holds.
 */
import type { QueryCreator, Transaction } from 'kysely';
import type { Database, Env } from '../../db/schema.js';

/** A `tstzrange` literal `[start,end)`. */
export function rangeLiteral(start: Date, end: Date): string {
  // toISOString: the same text as Luxon's UTC toISO(), without its cost (booking hot path).
  return `[${start.toISOString()},${end.toISOString()})`;
}

export async function hold(
  trx: Transaction<Database>,
  h: { appointmentId: string; kind: 'current' | 'pending'; env: Env; providerId: string; start: Date; end: Date },
): Promise<void> {
  await trx
    .insertInto('appointment_holds')
    .values({ appointment_id: h.appointmentId, kind: h.kind, env: h.env, provider_id: h.providerId, during: rangeLiteral(h.start, h.end) })
    .execute();
}

/** Releases the appointment's held time of `kind` (both when omitted). */
export async function release(trx: Transaction<Database>, appointmentId: string, kind?: 'current' | 'pending'): Promise<void> {
  let q = trx.deleteFrom('appointment_holds').where('appointment_id', '=', appointmentId);
  if (kind) q = q.where('kind', '=', kind);
  await q.execute();
}

/** What a pending hold holds: the appointment's new time on its provider's calendar. */
export interface PendingHold {
  appointmentId: string;
  env: Env;
  providerId: string;
  start: Date;
  end: Date;
}

/**
 * Holds `h` as the appointment's `pending` time, replacing a pending time it already held: one
 * statement (the insert, or on the appointment's existing pending row an update of its range), for
 * use on its own or as a data-modifying `WITH` part of a move's statement. The exclusion constraint
 * checks the new range either way; a clash fails the statement with `23P01`.
 */
export function pendingHoldQuery(qc: QueryCreator<Database>, h: PendingHold) {
  return qc
    .insertInto('appointment_holds')
    .values({ appointment_id: h.appointmentId, kind: 'pending', env: h.env, provider_id: h.providerId, during: rangeLiteral(h.start, h.end) })
    .onConflict((oc) => oc.columns(['appointment_id', 'kind']).doUpdateSet((eb) => ({ during: eb.ref('excluded.during') })));
}

/** {@link pendingHoldQuery} run on its own. */
export async function holdPending(trx: Transaction<Database>, h: PendingHold): Promise<void> {
  await pendingHoldQuery(trx, h).execute();
}
