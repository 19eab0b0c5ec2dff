/** `POST /v1/appointments/confirm` (docs/api/appointments.md#confirm, docs/api/appointments.md#lifecycle): pending_booking → confirmed; otherwise a `conflict` naming the status. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Principal } from '../credentials/principal.js';
import { recordChange } from './events.js';
import { lockVisible } from './lock.js';
import { statusFields } from './record.js';
import { assertMove } from './states.js';
import { inTransaction } from './transactions.js';

export async function confirmAppointment(db: Kysely<Database>, principal: Principal, id: string, opts: { requestId?: string } = {}) {
  return inTransaction(db, async (trx) => {
    const row = await lockVisible(trx, principal, id);
    assertMove('confirm', row.appointment_status);
    const updated = await trx
      .updateTable('appointments')
      .set({ appointment_status: 'confirmed', evaluate_after: null, updated_at: sql`now()` })
      .where('id', '=', id)
      .returning(['id', 'appointment_status', 'developer_patient_id'])
      .executeTakeFirstOrThrow();
    await recordChange(trx, { kind: 'principal', principal, ...(opts.requestId ? { requestId: opts.requestId } : {}) }, {
      env: row.env, developerId: row.developer_id, appointmentId: id, updateType: 'updated',
      changedAttributes: ['appointment.status'], action: 'confirm',
    });
    return statusFields(updated);
  });
}
