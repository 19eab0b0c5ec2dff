/**
 * `GET /v1/appointments/{appointment_id}/participants` (docs/api/appointments.md#participants; docs/api/conventions.md#additional-fields):
 * the patient of a visible appointment, with the provider and location ids and the patient's
 * uploaded attachments.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { notFound } from '../errors.js';
import type { Principal } from '../credentials/principal.js';
import type { AuditBuffer } from './audit-buffer.js';
import { audit } from './events.js';
import { visibleAppointments } from './visibility.js';

export async function appointmentParticipants(db: Kysely<Database>, principal: Principal, id: string, opts: { publicBaseUrl: string; requestId?: string; auditBuffer?: AuditBuffer }) {
  const row = await visibleAppointments(db, principal)
    .innerJoin('patients', 'patients.id', 'appointments.patient_id')
    .select([
      'appointments.id', 'appointments.env', 'appointments.developer_id', 'appointments.provider_id', 'appointments.location_id',
      'patients.id as patient_id', 'patients.developer_patient_id', 'patients.first_name', 'patients.last_name', 'patients.date_of_birth',
      'patients.sex_at_birth', 'patients.phone_number', 'patients.email_address',
    ])
    .where('appointments.id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound(`appointment ${id} not found`, 'appointment_id');
  const attachments = await db
    .selectFrom('attachments')
    .select(['id', 'attachment_type'])
    .where('appointment_id', '=', id)
    .orderBy('created_at')
    .execute();
  await audit(opts.auditBuffer ?? db, { kind: 'principal', principal, ...(opts.requestId ? { requestId: opts.requestId } : {}) }, {
    env: row.env, developerId: row.developer_id, appointmentId: id, action: 'read_participants',
  });
  return {
    provider_id: row.provider_id,
    location_id: row.location_id,
    patient: {
      patient_id: row.patient_id,
      ...(row.developer_patient_id !== null ? { developer_patient_id: row.developer_patient_id } : {}),
      first_name: row.first_name,
      last_name: row.last_name,
      date_of_birth: String(row.date_of_birth).slice(0, 10),
      sex_at_birth: row.sex_at_birth,
      phone_number: row.phone_number,
      email_address: row.email_address,
      uploaded_attachments: attachments.map((a) => ({
        attachment_type: a.attachment_type,
        attachment_url: `${opts.publicBaseUrl}/v1/appointments/${id}/attachments/${a.id}`,
      })),
      is_booked_by_another_patient: false,
    },
  };
}
