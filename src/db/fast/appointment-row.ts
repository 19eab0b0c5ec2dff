/**
 * An appointment record as one JSON array (docs/decisions/0012-fast-paths.md): the driver then
 * describes and parses one column instead of 25 (a tenth of `GET /v1/appointments/{id}`'s CPU), and
 * an insert returns its row the same way instead of the table's thirty columns (`RETURNING *`).
 * The array's order is `APPOINTMENT_COLUMNS`; the row type is the Kysely schema's, and the decoder
 * is generated from the list (`npm run generate:fast`).
 */
import { CompiledQuery, type Kysely } from 'kysely';
import { epochMsSql } from '../epoch-ms.js';
import type { Database } from '../schema.js';
import { APPOINTMENT_COLUMNS } from './appointment-columns.js';
import type { AppointmentRow } from './appointment-row-type.js';
import { decodeAppointmentRow } from './appointment-row.decoder.generated.js';

type Column = (typeof APPOINTMENT_COLUMNS)[number];
export type { AppointmentRow } from './appointment-row-type.js';

// Compile-time: the columns sent as epoch milliseconds are exactly the row's timestamps, and none of
// those is nullable (the generated decoder would turn null into 1970: extend the generator first).
type TimestampNames = { [K in keyof AppointmentRow]: Date extends NonNullable<AppointmentRow[K]> ? K : never }[keyof AppointmentRow];
type NullableTimestampNames = { [K in TimestampNames]: null extends AppointmentRow[K] ? K : never }[TimestampNames];
type EpochMsNames = Extract<Column, { as: 'epoch_ms' }>['name'];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const timestampsTravelAsEpochMs: Same<TimestampNames, EpochMsNames> & Same<NullableTimestampNames, never> = true;
void timestampsTravelAsEpochMs;

const valueSql = (ref: string, as: 'epoch_ms' | undefined): string => (as === 'epoch_ms' ? epochMsSql(ref) : ref);

/** `json_build_array` of the record's columns, read from the subquery `r` by their row names. */
const ROW_JSON = `json_build_array(${APPOINTMENT_COLUMNS.map((c) => valueSql(`r.${c.name}`, 'as' in c ? c.as : undefined)).join(', ')})`;

/** The appointment's own columns: the array's leading ones (the location's follow). */
const OWN_COLUMNS = APPOINTMENT_COLUMNS.filter((c) => c.table === 'appointments');

/** The row of `appointments` being written as one JSON array, without the location's phone (not a column of the table). */
export const APPOINTMENT_ARRAY = `json_build_array(${OWN_COLUMNS.map((c) => valueSql(c.name, 'as' in c ? c.as : undefined)).join(', ')})`;

/**
 * The `RETURNING` list of an insert into `appointments`: the new row as one JSON array named `j`
 * (`APPOINTMENT_ARRAY`).
 */
export const APPOINTMENT_RETURNING = `${APPOINTMENT_ARRAY} AS j`;

/** The row an insert (or an update) returned with `APPOINTMENT_RETURNING`, completed with the location's phone. */
export function rowFromReturned(j: unknown[], locationPhone: string | null, locationPhoneExtension: string | null): AppointmentRow {
  return decodeAppointmentRow([...j, locationPhone, locationPhoneExtension]);
}

/**
 * The text that runs `recordSql` (a compiled query selecting every column of `APPOINTMENT_COLUMNS`
 * by its row name) and returns each row as one JSON array named `j`.
 */
export function appointmentArrayQuery(recordSql: string): string {
  return `SELECT ${ROW_JSON} AS j FROM (${recordSql}) r`;
}

/** Runs a text of `appointmentArrayQuery` with `params`: its first row, decoded, or undefined. */
export async function readAppointmentRow(db: Kysely<Database>, text: string, params: unknown[]): Promise<AppointmentRow | undefined> {
  const res = await db.executeQuery<{ j: unknown[] }>(CompiledQuery.raw(text, params));
  const a = res.rows[0]?.j;
  return a ? decodeAppointmentRow(a) : undefined;
}
