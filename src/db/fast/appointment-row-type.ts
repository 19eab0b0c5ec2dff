/**
 * The type of an appointment record read as one JSON array (src/db/fast/appointment-row.ts): each
 * column of `APPOINTMENT_COLUMNS` with its type in the Kysely schema. A module of its own so that the
 * generated decoder can name it without importing the reader that imports the decoder.
 */
import type { Selectable } from 'kysely';
import type { Database } from '../schema.js';
import type { APPOINTMENT_COLUMNS } from './appointment-columns.js';

type Column = (typeof APPOINTMENT_COLUMNS)[number];
type ValueOf<C extends Column> = C extends { table: 'locations'; column: infer K extends keyof Database['locations'] }
  ? Selectable<Database['locations']>[K] | null // left-joined: no location, no phone
  : C extends { table: 'appointments'; name: infer K extends keyof Database['appointments'] }
    ? Selectable<Database['appointments']>[K]
    : never;

/** An appointment record: each column of `APPOINTMENT_COLUMNS` with its type in the Kysely schema. */
export type AppointmentRow = { [C in Column as C['name']]: ValueOf<C> };
