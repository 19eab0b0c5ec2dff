/**
 * The one place appointment visibility is enforced (interface.md §1 rule 5):
 * - booked with a user credential: visible and modifiable only by that user;
 * - booked with a machine-to-machine credential: visible and modifiable by any of that developer's
 *   machine-to-machine credentials;
 * - anonymous tokens see no appointments.
 * Every appointment query of the API starts from `visibleAppointments`.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Principal } from '../credentials/principal.js';

/** `appointments` rows the principal may see, in its environment. Works on a transaction handle too. */
export function visibleAppointments(db: Kysely<Database>, principal: Principal) {
  const base = db
    .selectFrom('appointments')
    .where('appointments.env', '=', principal.env)
    .where('appointments.developer_id', '=', principal.developerId);
  switch (principal.kind) {
    case 'user':
      return base.where('appointments.booked_by_user_id', '=', principal.userId);
    case 'client':
      return base.where('appointments.booked_by_user_id', 'is', null);
    default:
      return base.where(sql<boolean>`false`);
  }
}
