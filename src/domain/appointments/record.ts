/**
 * Appointment records as the API shows them (interface.md §2.2): the create-response fields (column
 * C) and the full record (column R), with `start_time` in the provider's own UTC offset.
 */
import { CompiledQuery, type Kysely, type SelectQueryBuilder } from 'kysely';
import { DateTime } from 'luxon';
import { epochMsSql } from '../../db/epoch-ms.js';
import type { AppointmentStatus, ConfirmationType, Database, VisitType } from '../../db/schema.js';
import type { Principal } from '../credentials/principal.js';
import { utcIso, type LocalClock } from '../scheduling/local-time.js';
import { visibleAppointments } from './visibility.js';

export interface AppointmentRow {
  id: string;
  env: 'sandbox' | 'production';
  developer_id: string;
  appointment_status: AppointmentStatus;
  developer_patient_id: string | null;
  is_provider_resource: boolean;
  confirmation_type: ConfirmationType;
  visit_type: VisitType;
  notes: string | null;
  start_time: Date;
  end_time: Date;
  time_zone: string;
  created_at: Date;
  updated_at: Date;
  provider_location_id: string;
  provider_id: string;
  location_id: string;
  practice_id: string | null;
  visit_reason_id: string;
  patient_type: 'new' | 'existing';
  patient_id: string;
  cancellation_reason: string | null;
  cancellation_reason_type: string | null;
  location_phone_number: string | null;
  location_phone_extension: string | null;
}

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
    const res = await this.db.executeQuery<{ j: unknown[] }>(CompiledQuery.raw(c.sql, c.params.map((f) => f(fields, id))));
    const a = res.rows[0]?.j;
    return a ? rowFromArray(a) : undefined;
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
    // The row comes back as one JSON array (timestamps as epoch milliseconds): the driver then
    // describes and parses one column instead of 25, a tenth of the request's CPU.
    return { sql: `SELECT json_build_array(${ROW_JSON}) AS j FROM (${q.sql}) r`, params };
  }
}

/** Timestamp columns of `AppointmentRow`, sent as epoch milliseconds in the JSON row. */
const TIMESTAMPS = new Set(['start_time', 'end_time', 'created_at', 'updated_at']);
/** The columns of `AppointmentRow` in the order of `rowFromArray`. */
const ROW_COLUMNS = [
  'id', 'env', 'developer_id', 'appointment_status', 'developer_patient_id', 'is_provider_resource', 'confirmation_type',
  'visit_type', 'notes', 'start_time', 'end_time', 'time_zone', 'created_at', 'updated_at', 'provider_location_id',
  'provider_id', 'location_id', 'practice_id', 'visit_reason_id', 'patient_type', 'patient_id', 'cancellation_reason',
  'cancellation_reason_type', 'location_phone_number', 'location_phone_extension',
] as const satisfies readonly (keyof AppointmentRow)[];
const ROW_JSON = ROW_COLUMNS.map((c) => (TIMESTAMPS.has(c) ? epochMsSql(`r.${c}`) : `r.${c}`)).join(', ');

/**
 * The `RETURNING` list of an insert into `appointments`: the new row as one JSON array in
 * `ROW_COLUMNS` order, without the location's phone (not a column of the table). One column for the
 * driver to describe and parse instead of the table's thirty (`RETURNING *`).
 */
export const APPOINTMENT_RETURNING = `json_build_array(${ROW_COLUMNS.slice(0, -2)
  .map((c) => (TIMESTAMPS.has(c) ? epochMsSql(c) : c))
  .join(', ')}) AS j`;

/** The row an insert returned with `APPOINTMENT_RETURNING`, completed with the location's phone. */
export function rowFromReturned(j: unknown[], locationPhone: string | null, locationPhoneExtension: string | null): AppointmentRow {
  return rowFromArray([...j, locationPhone, locationPhoneExtension]);
}

/** An `AppointmentRow` from its JSON array (`ROW_COLUMNS` order). */
function rowFromArray(a: unknown[]): AppointmentRow {
  return {
    id: a[0] as string,
    env: a[1] as AppointmentRow['env'],
    developer_id: a[2] as string,
    appointment_status: a[3] as AppointmentStatus,
    developer_patient_id: a[4] as string | null,
    is_provider_resource: a[5] as boolean,
    confirmation_type: a[6] as ConfirmationType,
    visit_type: a[7] as VisitType,
    notes: a[8] as string | null,
    start_time: new Date(a[9] as number),
    end_time: new Date(a[10] as number),
    time_zone: a[11] as string,
    created_at: new Date(a[12] as number),
    updated_at: new Date(a[13] as number),
    provider_location_id: a[14] as string,
    provider_id: a[15] as string,
    location_id: a[16] as string,
    practice_id: a[17] as string | null,
    visit_reason_id: a[18] as string,
    patient_type: a[19] as AppointmentRow['patient_type'],
    patient_id: a[20] as string,
    cancellation_reason: a[21] as string | null,
    cancellation_reason_type: a[22] as string | null,
    location_phone_number: a[23] as string | null,
    location_phone_extension: a[24] as string | null,
  };
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

/** Column C of interface.md §2.2. */
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
 * Column R of interface.md §2.2. Pass a long-lived `clock` to memoise the zone offset formatting
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

/** The short answer of confirm, cancel and update-status (interface.md §2.2 last paragraph). */
export function statusFields(row: Pick<AppointmentRow, 'id' | 'appointment_status' | 'developer_patient_id'>) {
  return {
    appointment_id: row.id,
    appointment_status: row.appointment_status,
    ...(row.developer_patient_id !== null ? { developer_patient_id: row.developer_patient_id } : {}),
  };
}
