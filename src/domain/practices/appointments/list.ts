/**
 * The practice's appointments as a list (docs/decisions/0014-practice-workspace.md): filtered by
 * start time, status and provider, sorted by start time, paginated like `/v1` lists with at most
 * `LIST_CAP` reachable (docs/api/appointments.md#list-appointments). Items carry the calendar's
 * fields (patient name, visit reason, booking developer), no contact details.
 */
import { sql, type Kysely } from 'kysely';
import type { AppointmentStatus, Database } from '../../../db/schema.js';
import { LIST_CAP } from '../../appointments/list.js';
import { APPOINTMENT_STATUSES } from '../../appointments/states.js';
import { invalidFields, type FieldError } from '../../errors.js';
import { LocalClock, parseOffsetDateTime, utcIso } from '../../scheduling/local-time.js';
import type { StaffPrincipal } from '../staff-principal.js';
import type { CalendarAppointment } from './calendar.js';
import { practiceAppointments, requireReadingStaff } from './scope.js';

export interface PracticeListQuery {
  page: number;
  pageSize: number;
  /** Start time at or after this instant (ISO-8601 with an offset). */
  from?: string | undefined;
  /** Start time before this instant. */
  to?: string | undefined;
  /** Comma list of statuses. */
  status?: string | undefined;
  provider_id?: string | undefined;
}

export type PracticeListItem = CalendarAppointment & { provider_id: string; provider_location_id: string; time_zone: string };

/** Every error of the list's filters at once (docs/api/errors.md, "Validation"). */
export function practiceListErrors(q: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  for (const f of ['from', 'to'] as const) {
    const v = q[f];
    if (typeof v === 'string' && !parseOffsetDateTime(v)) errors.push({ field: f, message: 'must be an ISO-8601 date-time with a UTC offset' });
  }
  if (typeof q.status === 'string') {
    const bad = q.status.split(',').map((s) => s.trim()).filter((s) => s && !APPOINTMENT_STATUSES.includes(s as AppointmentStatus));
    if (bad.length) errors.push({ field: 'status', message: `unknown status ${bad.join(', ')}; must be among: ${APPOINTMENT_STATUSES.join(', ')}` });
  }
  return errors;
}

/** One page of the practice's appointments and the number of all matches. */
export async function practiceAppointmentList(
  db: Kysely<Database>,
  staff: StaffPrincipal,
  q: PracticeListQuery,
  opts: { clock?: LocalClock } = {},
): Promise<{ items: PracticeListItem[]; totalCount: number }> {
  requireReadingStaff(staff);
  const errors = practiceListErrors(q as unknown as Record<string, unknown>);
  if (errors.length) throw invalidFields(errors);
  const clock = opts.clock ?? new LocalClock();
  let base = practiceAppointments(db, staff);
  if (q.from) base = base.where('appointments.start_time', '>=', parseOffsetDateTime(q.from)!.toJSDate());
  if (q.to) base = base.where('appointments.start_time', '<', parseOffsetDateTime(q.to)!.toJSDate());
  const statuses = (q.status ?? '').split(',').map((s) => s.trim()).filter(Boolean) as AppointmentStatus[];
  if (statuses.length) base = base.where('appointments.appointment_status', 'in', statuses);
  if (q.provider_id !== undefined) base = base.where('appointments.provider_id', '=', q.provider_id);
  const offset = q.page * q.pageSize;
  const limit = Math.max(0, Math.min(q.pageSize, LIST_CAP - offset));
  const [count, rows] = await Promise.all([
    base.select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    limit === 0
      ? Promise.resolve([])
      : base
          .innerJoin('patients as pa', 'pa.id', 'appointments.patient_id')
          .innerJoin('visit_reasons as vr', (j) => j.onRef('vr.env', '=', 'appointments.env').onRef('vr.id', '=', 'appointments.visit_reason_id'))
          .innerJoin('developers as d', 'd.id', 'appointments.developer_id')
          .select([
            'appointments.id', 'appointments.provider_id', 'appointments.provider_location_id', 'appointments.time_zone', 'appointments.appointment_status',
            'appointments.confirmation_type', 'appointments.start_time', 'appointments.end_time', 'appointments.arrived_at', 'appointments.visit_reason_id',
            'vr.name as visit_reason_name', 'pa.first_name', 'pa.last_name', 'd.name as developer_name',
          ])
          .orderBy('appointments.start_time')
          .orderBy('appointments.id')
          .limit(limit)
          .offset(offset)
          .execute(),
  ]);
  return {
    totalCount: Number(count.n),
    items: rows.map((a) => ({
      appointment_id: a.id,
      provider_id: a.provider_id,
      provider_location_id: a.provider_location_id,
      time_zone: a.time_zone,
      appointment_status: a.appointment_status,
      confirmation_type: a.confirmation_type,
      start_time: clock.format(a.time_zone, a.start_time.getTime()),
      end_time: clock.format(a.time_zone, a.end_time.getTime()),
      start_time_utc: utcIso(a.start_time),
      end_time_utc: utcIso(a.end_time),
      arrived: a.arrived_at !== null,
      visit_reason: { id: a.visit_reason_id, name: a.visit_reason_name },
      patient: { first_name: a.first_name, last_name: a.last_name },
      booked_by: a.developer_name,
    })),
  };
}
