/**
 * `GET /v1/appointments` (docs/api/appointments.md#list-appointments, docs/api/conventions.md#limits): every filter and sort of the listing over the appointments
 * the caller may see, paginated, with at most 1,000 appointments reachable through pagination.
 */
import { sql, type Kysely } from 'kysely';
import type { AppointmentStatus, Database } from '../../db/schema.js';
import type { Principal } from '../credentials/principal.js';
import { selectRecord, type AppointmentRow } from './record.js';
import { visibleAppointments } from './visibility.js';

/** Appointments reachable through pagination in total (docs/api/conventions.md#limits). */
export const LIST_CAP = 1000;

export interface ListFilter {
  page: number;
  pageSize: number;
  statuses?: AppointmentStatus[];
  developerPatientId?: string;
  sortBy: 'start_time_utc' | 'created_time_utc' | 'last_modified_time_utc';
  sortDirection: 'ascending' | 'descending';
  providerIds?: string[];
  locationIds?: string[];
  practiceIds?: string[];
  startMin?: Date;
  startMax?: Date;
  createdMin?: Date;
  createdMax?: Date;
  modifiedMin?: Date;
  modifiedMax?: Date;
}

const SORT_COLUMN = {
  start_time_utc: 'appointments.start_time',
  created_time_utc: 'appointments.created_at',
  last_modified_time_utc: 'appointments.updated_at',
} as const;

export async function listAppointments(db: Kysely<Database>, principal: Principal, f: ListFilter): Promise<{ rows: AppointmentRow[]; totalCount: number }> {
  let q = visibleAppointments(db, principal);
  if (f.statuses?.length) q = q.where('appointments.appointment_status', 'in', f.statuses);
  if (f.developerPatientId !== undefined) q = q.where('appointments.developer_patient_id', '=', f.developerPatientId);
  if (f.providerIds?.length) q = q.where('appointments.provider_id', 'in', f.providerIds);
  if (f.locationIds?.length) q = q.where('appointments.location_id', 'in', f.locationIds);
  if (f.practiceIds?.length) q = q.where('appointments.practice_id', 'in', f.practiceIds);
  if (f.startMin) q = q.where('appointments.start_time', '>=', f.startMin);
  if (f.startMax) q = q.where('appointments.start_time', '<=', f.startMax);
  if (f.createdMin) q = q.where('appointments.created_at', '>=', f.createdMin);
  if (f.createdMax) q = q.where('appointments.created_at', '<=', f.createdMax);
  if (f.modifiedMin) q = q.where('appointments.updated_at', '>=', f.modifiedMin);
  if (f.modifiedMax) q = q.where('appointments.updated_at', '<=', f.modifiedMax);

  const offset = f.page * f.pageSize;
  const limit = Math.max(0, Math.min(f.pageSize, LIST_CAP - offset));
  const dir = f.sortDirection === 'ascending' ? 'asc' : 'desc';
  const [count, rows] = await Promise.all([
    q.select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    limit === 0
      ? Promise.resolve([])
      : selectRecord(q).orderBy(SORT_COLUMN[f.sortBy], dir).orderBy('appointments.id', dir).limit(limit).offset(offset).execute(),
  ]);
  return { rows: rows as AppointmentRow[], totalCount: Number(count.n) };
}
