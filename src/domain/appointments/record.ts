/**
 * Appointment records as the API shows them (docs/api/appointments.md#appointment-records): the create-response fields (column
 * C) and the full record (column R), with `start_time` in the provider's own UTC offset.
 */
import type { Kysely, SelectQueryBuilder } from 'kysely';
import { DateTime } from 'luxon';
import { appointmentArrayQuery, readAppointmentRow, type AppointmentRow } from '../../db/fast/appointment-row.js';
import type { AppointmentStatus, ConfirmationType, Database, VisitType } from '../../db/schema.js';
import type { Principal } from '../credentials/principal.js';
import { utcIso, type LocalClock } from '../scheduling/local-time.js';
import { visibleAppointments } from './visibility.js';

/** An appointment record as the database holds it (src/db/fast/appointment-row.ts). */
export type { AppointmentRow };

/** The columns every record needs, joined with the location's phone. */
export function selectRecord<QB extends SelectQueryBuilder<Database, 'appointments', object>>(qb: QB) {
  return qb
    .leftJoin('locations', (j) => j.onRef('locations.env', '=', 'appointments.env').onRef('locations.id', '=', 'appointments.location_id'))
    .select([
      'appointments.id', 'appointments.env', 'appointments.developer_id', 'appointments.appointment_status',
      'appointments.developer_patient_id', 'appointments.is_provider_resource', 'appointments.confirmation_type',
      'appointments.visit_type', 'appointments.notes', 'appointments.start_time', 'appointments.end_time', 'appointments.time_zone',
      'appointments.created_at', 'appointments.updated_at', 'appointments.provider_location_id', 'appointments.provider_id',
      'appointments.location_id', 'appointments.practice_id', 'appointments.visit_reason_id', 'appointments.patient_type',
      'appointments.patient_id', 'appointments.cancellation_reason', 'appointments.cancellation_reason_type',
      'locations.phone_number as location_phone_number', 'locations.phone_extension as location_phone_extension',
    ]);
}

/** One visible appointment as a row, or undefined. */
export async function findVisible(db: Kysely<Database>, principal: Principal, id: string): Promise<AppointmentRow | undefined> {
  return (await selectRecord(visibleAppointments(db, principal).where('appointments.id', '=', id)).executeTakeFirst()) as
    | AppointmentRow
    | undefined;
}

/** Marks a parameter that stands for a principal field (or the id) in a query compiled once. */
const SENTINEL = '\u0000carebook-param:';

/**
 * `findVisible` with its SQL compiled once per principal kind and re-run with each call's values:
 * building and compiling the query with Kysely costs about half a millisecond of CPU, more than the
 * rest of `GET /v1/appointments/{id}`. The visibility rule is still `visibleAppointments`': the query
 * is compiled from it with every string field of the principal but `kind` replaced by a marker, and each marker
 * parameter is filled from the caller's principal (a value derived from a principal field other than
 * by copying would not be a marker, so compiling refuses any parameter it cannot place). Make one per
 * application.
 */
export class VisibleRecordReader {
  private readonly byKind = new Map<Principal['kind'], { sql: string; params: ((p: Record<string, unknown>, id: string) => unknown)[] }>();

  constructor(private readonly db: Kysely<Database>) {}

  /** The visible appointment `id` as a row, or undefined (same answer as `findVisible`). */
  async find(principal: Principal, id: string): Promise<AppointmentRow | undefined> {
    let c = this.byKind.get(principal.kind);
    if (!c) this.byKind.set(principal.kind, (c = this.compile(principal)));
    const fields = principal as unknown as Record<string, unknown>;
    return readAppointmentRow(this.db, c.sql, c.params.map((f) => f(fields, id)));
  }

  private compile(principal: Principal): { sql: string; params: ((p: Record<string, unknown>, id: string) => unknown)[] } {
    const template: Record<string, unknown> = {};
    // `kind` is the cache key and picks the rule; every other string field becomes a marker.
    for (const [k, v] of Object.entries(principal)) template[k] = typeof v === 'string' && k !== 'kind' ? `${SENTINEL}${k}` : v;
    const idMarker = `${SENTINEL}#id`;
    const q = selectRecord(visibleAppointments(this.db, template as unknown as Principal).where('appointments.id', '=', idMarker)).compile();
    if (q.sql.includes(SENTINEL)) throw new Error('VisibleRecordReader: a principal field was inlined into the SQL text');
    const params = q.parameters.map((v): ((p: Record<string, unknown>, id: string) => unknown) => {
      if (v === idMarker) return (_p, id) => id;
      if (typeof v === 'string' && v.startsWith(SENTINEL)) {
        const key = v.slice(SENTINEL.length);
        return (p) => p[key];
      }
      if (typeof v === 'string' && v.includes(SENTINEL)) throw new Error('VisibleRecordReader: a parameter derived from a principal field cannot be reused');
      return () => v;
    });
    // The row comes back as one JSON array (src/db/fast/appointment-row.ts).
    return { sql: appointmentArrayQuery(q.sql), params };
  }
}

export interface CreateFields {
  appointment_id: string;
  appointment_status: AppointmentStatus;
  developer_patient_id?: string;
  is_provider_resource: boolean;
  location_phone_number?: string;
  location_phone_extension?: string;
  waiting_room_path?: string;
  confirmation_type: ConfirmationType;
  visit_type: VisitType;
  notes?: string;
}

export interface FullRecord extends CreateFields {
  start_time: string;
  created_time_utc: string;
  last_modified_time_utc: string;
  provider_location_id: string;
  practice_id?: string;
  visit_reason_id: string;
  patient_type: 'new' | 'existing';
  cancellation_reason?: string;
  cancellation_reason_type?: string;
}

/** Patient-facing video waiting room for platform video visits (a path on the public base URL). */
export function waitingRoomPath(publicBaseUrl: string, row: Pick<AppointmentRow, 'id' | 'visit_type'>): string | undefined {
  return row.visit_type === 'platform_video_service' ? `${publicBaseUrl}/waiting-room/${row.id}` : undefined;
}

/** The fields of create and reschedule answers (docs/api/appointments.md#appointment-records). */
export function createFields(row: AppointmentRow, publicBaseUrl: string): CreateFields {
  const out: CreateFields = {
    appointment_id: row.id,
    appointment_status: row.appointment_status,
    is_provider_resource: row.is_provider_resource,
    confirmation_type: row.confirmation_type,
    visit_type: row.visit_type,
  };
  if (row.developer_patient_id !== null) out.developer_patient_id = row.developer_patient_id;
  if (row.location_phone_number) out.location_phone_number = row.location_phone_number;
  if (row.location_phone_extension) out.location_phone_extension = row.location_phone_extension;
  const room = waitingRoomPath(publicBaseUrl, row);
  if (room) out.waiting_room_path = room;
  if (row.notes !== null) out.notes = row.notes;
  return out;
}

/**
 * The fields of reads and lists (docs/api/appointments.md#appointment-records). Pass a long-lived `clock` to memoise the zone offset formatting
 * (Luxon's zone lookup is most of the cost of a record).
 */
export function fullRecord(row: AppointmentRow, publicBaseUrl: string, clock?: LocalClock): FullRecord {
  // One object literal of a fixed shape (absent optional fields are undefined, which the response
  // serializer and JSON.stringify both omit): the column C fields of `createFields` plus column R.
  return {
    appointment_id: row.id,
    appointment_status: row.appointment_status,
    developer_patient_id: row.developer_patient_id ?? undefined,
    is_provider_resource: row.is_provider_resource,
    location_phone_number: row.location_phone_number || undefined,
    location_phone_extension: row.location_phone_extension || undefined,
    waiting_room_path: waitingRoomPath(publicBaseUrl, row),
    confirmation_type: row.confirmation_type,
    visit_type: row.visit_type,
    notes: row.notes ?? undefined,
    start_time: clock
      ? clock.format(row.time_zone, row.start_time.getTime())
      : DateTime.fromJSDate(row.start_time, { zone: row.time_zone }).toISO({ suppressMilliseconds: true })!,
    created_time_utc: utcIso(row.created_at),
    last_modified_time_utc: utcIso(row.updated_at),
    provider_location_id: row.provider_location_id,
    practice_id: row.practice_id || undefined,
    visit_reason_id: row.visit_reason_id,
    patient_type: row.patient_type,
    cancellation_reason: row.cancellation_reason || undefined,
    cancellation_reason_type: row.cancellation_reason_type || undefined,
  };
}

/** The short answer of confirm, cancel and update-status (docs/api/appointments.md#appointment-records). */
export function statusFields(row: Pick<AppointmentRow, 'id' | 'appointment_status' | 'developer_patient_id'>) {
  return {
    appointment_id: row.id,
    appointment_status: row.appointment_status,
    ...(row.developer_patient_id !== null ? { developer_patient_id: row.developer_patient_id } : {}),
  };
}
