/**
 * The fast paths' positional decoding (src/db/fast/, docs/decisions/0012-fast-paths.md): the
 * checked-in decoder is what its column list generates, the list is the Kysely record type (checked
 * when this file compiles), and on real rows the JSON-array path returns exactly what Kysely returns.
 */
import { sql, type InferResult, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPOINTMENT_COLUMNS } from '../../src/db/fast/appointment-columns.js';
import { appointmentArrayQuery, readAppointmentRow, type AppointmentRow } from '../../src/db/fast/appointment-row.js';
import type { Database } from '../../src/db/schema.js';
import { selectRecord } from '../../src/domain/appointments/record.js';
import { decoderSource, generatedFiles, staleFiles } from '../../scripts/fast-decoders.js';
import { bookVariedRecords, PL, schedulingEnv, type SchedulingEnv } from '../appointments/fixtures.js';
import { engineName } from '../helpers/db.js';

// Compile-time: the row the decoder builds is the row Kysely infers for the record query, field for
// field and type for type (a column added to one and not the other fails `tsc`).
const recordQuery = (db: Kysely<Database>) => selectRecord(db.selectFrom('appointments'));
type KyselyRecordRow = InferResult<ReturnType<typeof recordQuery>>[number];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const decoderMatchesKysely: Same<KyselyRecordRow, AppointmentRow> = true;

describe('generated decoders', () => {
  it('are what their column lists generate (run npm run generate:fast after changing a list)', () => {
    expect(decoderMatchesKysely).toBe(true);
    expect(staleFiles()).toEqual([]);
  });

  it('change with their list: a reordered list gives another decoder', () => {
    const [file] = generatedFiles();
    const swapped = [APPOINTMENT_COLUMNS[1], APPOINTMENT_COLUMNS[0], ...APPOINTMENT_COLUMNS.slice(2)];
    const other = decoderSource({ name: 'decodeAppointmentRow', rowType: 'AppointmentRow', typeModule: './appointment-row.js', listModule: 'appointment-columns.ts', listName: 'APPOINTMENT_COLUMNS', columns: swapped });
    expect(other).not.toBe(file!.text);
    expect(other).toContain('env: a[0] as AppointmentRow');
  });

  it("the appointment's own columns lead the list (an insert returns them, the location's are appended)", () => {
    const tables = APPOINTMENT_COLUMNS.map((c) => c.table);
    expect(tables.lastIndexOf('appointments')).toBeLessThan(tables.indexOf('locations'));
  });
});

describe(`appointment rows as JSON arrays (${engineName})`, () => {
  let e: SchedulingEnv;
  const ids: string[] = [];
  beforeAll(async () => {
    e = await schedulingEnv();
    // Nullable columns with values and with nulls: notes or none, a cancellation reason or none.
    ids.push(...(await bookVariedRecords(e, [[PL.ny, { notes: 'Bring the referral letter' }], [PL.hnl, {}]], 1)));
  });
  afterAll(async () => e.close());

  it('every column of the list exists in the database with the name the list gives', async () => {
    const { rows } = await sql<{ table_name: string; column_name: string }>`
      SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name IN ('appointments', 'locations')`.execute(e.t.db);
    const present = new Set(rows.map((r) => `${r.table_name}.${r.column_name}`));
    for (const c of APPOINTMENT_COLUMNS) expect(present, c.name).toContain(`${c.table}.${'column' in c ? c.column : c.name}`);
  });

  it('decodes a real row to exactly what Kysely reads: same keys, values, nulls, Dates to the millisecond', async () => {
    for (const id of ids) {
      const q = recordQuery(e.t.db).where('appointments.id', '=', id);
      const slow = await q.executeTakeFirstOrThrow();
      const compiled = q.compile();
      const fast = await readAppointmentRow(e.t.db, appointmentArrayQuery(compiled.sql), [...compiled.parameters]);
      expect(Object.keys(slow).sort()).toEqual(APPOINTMENT_COLUMNS.map((c) => c.name).sort());
      expect(fast).toStrictEqual(slow);
    }
    const [withValues, cancelled] = await Promise.all(ids.map((id) => recordQuery(e.t.db).where('appointments.id', '=', id).executeTakeFirstOrThrow()));
    expect(withValues).toMatchObject({ notes: 'Bring the referral letter', cancellation_reason: null, cancellation_reason_type: null });
    expect(cancelled).toMatchObject({ notes: null, appointment_status: 'cancelled', cancellation_reason: 'Moved away', cancellation_reason_type: 'other_patient_reason' });
  });
});
