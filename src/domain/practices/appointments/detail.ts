/**
 * One appointment as the practice sees it (docs/decisions/0014-practice-workspace.md, "Accounts"):
 * the record, the visit reason, the booking developer, the patient (for staff with contact details,
 * date of birth, address and insurance; for a provider user the name alone) and the history of its
 * changes from the audit log (time, action, kind of actor; never patient data). Every view is
 * recorded in the audit log (`staff:view`, actor kind `staff`), like `/v1` reads
 * (docs/api/appointments.md#read-an-appointment).
 */
import type { Kysely } from 'kysely';
import type { AppointmentStatus, Database } from '../../../db/schema.js';
import { audit } from '../../appointments/events.js';
import { notFound } from '../../errors.js';
import { LocalClock, utcIso } from '../../scheduling/local-time.js';
import { staffActor, type StaffPrincipal } from '../staff-principal.js';
import { practiceAppointments, requireReadingStaff } from './scope.js';

/** Audit actions that record a read, not a change: left out of an appointment's history. */
export const READ_ACTIONS = ['read', 'read_participants', 'download_attachment', 'staff:view'];

export interface PracticePatient {
  first_name: string;
  last_name: string;
  date_of_birth?: string;
  sex_at_birth?: string;
  phone_number?: string;
  email_address?: string;
  address?: unknown;
  insurance?: unknown;
}

export interface HistoryEntry {
  at: string;
  action: string;
  actor_kind: string;
}

export interface PracticeAppointmentView {
  appointment_id: string;
  appointment_status: AppointmentStatus;
  confirmation_type: string;
  visit_type: string;
  provider_id: string;
  provider_location_id: string;
  location_id: string;
  time_zone: string;
  start_time: string;
  end_time: string;
  start_time_utc: string;
  end_time_utc: string;
  pending_start_time_utc?: string;
  patient_type: string;
  arrived: boolean;
  notes?: string;
  cancellation_reason_type?: string;
  cancellation_reason?: string;
  created_time_utc: string;
  last_modified_time_utc: string;
  visit_reason: { id: string; name: string };
  booked_by: { developer_id: string; name: string };
  patient: PracticePatient;
  history: HistoryEntry[];
}

/** The practice's view of appointment `id` (see the module comment), or `not_found`; writes the audit row. */
export async function practiceAppointment(
  db: Kysely<Database>,
  staff: StaffPrincipal,
  id: string,
  opts: { requestId?: string; clock?: LocalClock } = {},
): Promise<PracticeAppointmentView> {
  requireReadingStaff(staff);
  const clock = opts.clock ?? new LocalClock();
  const row = await practiceAppointments(db, staff)
    .innerJoin('patients as pa', 'pa.id', 'appointments.patient_id')
    .innerJoin('visit_reasons as vr', (j) => j.onRef('vr.env', '=', 'appointments.env').onRef('vr.id', '=', 'appointments.visit_reason_id'))
    .innerJoin('developers as d', 'd.id', 'appointments.developer_id')
    .selectAll('appointments')
    .select([
      'vr.name as visit_reason_name', 'd.name as developer_name', 'pa.first_name', 'pa.last_name', 'pa.date_of_birth', 'pa.sex_at_birth',
      'pa.phone_number', 'pa.email_address', 'pa.address', 'pa.insurance',
    ])
    .where('appointments.id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound(`appointment ${id} not found`, 'appointment_id');
  const [history] = await Promise.all([
    db
      .selectFrom('audit_log')
      .select(['at', 'action', 'actor_kind'])
      .where('appointment_id', '=', id)
      .where('env', '=', staff.env)
      .where('action', 'not in', READ_ACTIONS)
      .orderBy('at')
      .orderBy('id')
      .execute(),
    audit(db, staffActor(staff, opts.requestId), { env: row.env, developerId: row.developer_id, appointmentId: row.id, action: 'staff:view' }),
  ]);
  const zone = row.time_zone;
  const withContact = staff.role !== 'provider';
  return {
    appointment_id: row.id,
    appointment_status: row.appointment_status,
    confirmation_type: row.confirmation_type,
    visit_type: row.visit_type,
    provider_id: row.provider_id,
    provider_location_id: row.provider_location_id,
    location_id: row.location_id,
    time_zone: zone,
    start_time: clock.format(zone, row.start_time.getTime()),
    end_time: clock.format(zone, row.end_time.getTime()),
    start_time_utc: utcIso(row.start_time),
    end_time_utc: utcIso(row.end_time),
    ...(row.pending_start_time ? { pending_start_time_utc: utcIso(row.pending_start_time) } : {}),
    patient_type: row.patient_type,
    arrived: row.arrived_at !== null,
    ...(row.notes ? { notes: row.notes } : {}),
    ...(row.cancellation_reason_type ? { cancellation_reason_type: row.cancellation_reason_type } : {}),
    ...(row.cancellation_reason ? { cancellation_reason: row.cancellation_reason } : {}),
    created_time_utc: utcIso(row.created_at),
    last_modified_time_utc: utcIso(row.updated_at),
    visit_reason: { id: row.visit_reason_id, name: row.visit_reason_name },
    booked_by: { developer_id: row.developer_id, name: row.developer_name },
    patient: withContact
      ? {
          first_name: row.first_name, last_name: row.last_name, date_of_birth: row.date_of_birth, sex_at_birth: row.sex_at_birth,
          phone_number: row.phone_number, email_address: row.email_address, address: row.address ?? undefined, insurance: row.insurance ?? undefined,
        }
      : { first_name: row.first_name, last_name: row.last_name },
    history: history.map((h) => ({ at: utcIso(h.at), action: h.action, actor_kind: h.actor_kind })),
  };
}
