/**
 * The one place where appointment visibility (docs/api/auth.md#who-sees-which-appointments) is decided. Every appointment
 * query — list, read, participants, attachments, confirm, cancel, reschedule, update-status — starts
 * from `visibleAppointments` (reads) or filters with `appointmentVisibleTo` (updates, deletes, joins):
 *
 * - always the caller's environment and developer;
 * - a user credential sees only the appointments that user booked (`booked_by_user_id`);
 * - a machine-to-machine credential sees the appointments booked with any of the developer's
 *   machine-to-machine credentials, and not those booked by a signed-in user ("visible and
 *   modifiable only by that user");
 * - an anonymous token sees none.
 */
import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Principal } from '../credentials/principal.js';

/**
 * The visibility condition for `appointments` rows, for `where(...)` on any query over the
 * `appointments` table (select, update, delete). Use it when the query does not start with
 * `visibleAppointments`.
 */
export function appointmentVisibleTo(principal: Principal) {
  return (eb: ExpressionBuilder<Database, 'appointments'>) => {
    const tenant = [eb('appointments.env', '=', principal.env), eb('appointments.developer_id', '=', principal.developerId)];
    switch (principal.kind) {
      case 'user':
        return eb.and([...tenant, eb('appointments.booked_by_user_id', '=', principal.userId)]);
      case 'client':
        return eb.and([...tenant, eb('appointments.booked_by_user_id', 'is', null)]);
      case 'anonymous':
        return eb.and([...tenant, sql<boolean>`false`]);
    }
  };
}

/**
 * `selectFrom('appointments')` already restricted to what `principal` may see; add selections,
 * filters, ordering and paging to it. Works on a transaction too.
 *
 * @example
 *   const row = await visibleAppointments(db, p).selectAll().where('id', '=', id).executeTakeFirst();
 */
export function visibleAppointments(db: Kysely<Database>, principal: Principal) {
  return db.selectFrom('appointments').where(appointmentVisibleTo(principal));
}
