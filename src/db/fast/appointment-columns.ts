/**
 * The columns of an appointment record read or returned as one JSON array (`appointment-row.ts`),
 * in array order. The source of the generated decoder (`appointment-row.decoder.generated.ts`,
 * `npm run generate:fast`): change this list, then regenerate. Imports nothing, so the generator
 * can load it whatever state the generated file is in.
 */

/** One column of the array: its name in the row, where it comes from, how it travels. */
export interface FastColumn {
  /** The row's property name. */
  readonly name: string;
  /** The table it is read from (`locations`: the appointment's location, left-joined). */
  readonly table: 'appointments' | 'locations';
  /** The table's column, when it differs from `name`. */
  readonly column?: string;
  /** `epoch_ms`: a `timestamptz` sent as whole epoch milliseconds (src/db/epoch-ms.ts), decoded to a `Date`. */
  readonly as?: 'epoch_ms';
}

/**
 * The record's columns, the appointment's own first: an insert's `RETURNING` list is the
 * `appointments` columns alone, and the location's are appended to the array it returns.
 */
export const APPOINTMENT_COLUMNS = [
  { name: 'id', table: 'appointments' },
  { name: 'env', table: 'appointments' },
  { name: 'developer_id', table: 'appointments' },
  { name: 'appointment_status', table: 'appointments' },
  { name: 'developer_patient_id', table: 'appointments' },
  { name: 'is_provider_resource', table: 'appointments' },
  { name: 'confirmation_type', table: 'appointments' },
  { name: 'visit_type', table: 'appointments' },
  { name: 'notes', table: 'appointments' },
  { name: 'start_time', table: 'appointments', as: 'epoch_ms' },
  { name: 'end_time', table: 'appointments', as: 'epoch_ms' },
  { name: 'time_zone', table: 'appointments' },
  { name: 'created_at', table: 'appointments', as: 'epoch_ms' },
  { name: 'updated_at', table: 'appointments', as: 'epoch_ms' },
  { name: 'provider_location_id', table: 'appointments' },
  { name: 'provider_id', table: 'appointments' },
  { name: 'location_id', table: 'appointments' },
  { name: 'practice_id', table: 'appointments' },
  { name: 'visit_reason_id', table: 'appointments' },
  { name: 'patient_type', table: 'appointments' },
  { name: 'patient_id', table: 'appointments' },
  { name: 'cancellation_reason', table: 'appointments' },
  { name: 'cancellation_reason_type', table: 'appointments' },
  { name: 'location_phone_number', table: 'locations', column: 'phone_number' },
  { name: 'location_phone_extension', table: 'locations', column: 'phone_extension' },
] as const satisfies readonly FastColumn[];
