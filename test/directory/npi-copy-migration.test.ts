/**
 * Migration 0027 on a generated directory: `down()` removes the NPI copy on
 * `developer_provider_locations` with its index and trigger, and `up()` fills it from a directory
 * changed meanwhile (a provider's new NPI, another developer's rows), after which writes keep it again.
 */
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { down, up } from '../../src/db/migrations/0027_developer_npi_copy.js';
import type { DirectoryDocument } from '../../src/domain/directory/document.js';
import { generateDirectory } from '../../src/domain/directory/seed.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { scaled } from '../helpers/scale.js';
import { npi } from './fixture.js';
import { npiMismatches } from './search-oracle.js';

let t: TestApp;
let doc: DirectoryDocument;

beforeAll(async () => {
  t = await testApp();
  doc = generateDirectory(120, 27);
  const a = await newDeveloper(t, 'NPI copy A');
  await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, doc, { developerId: a.developer_id }));
}, scaled(60_000));
afterAll(async () => t?.close());

const hasColumn = async () =>
  (await sql<{ n: number }>`SELECT count(*)::int AS n FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'developer_provider_locations' AND column_name = 'npi'`.execute(t.db)).rows[0]!.n === 1;
const hasIndex = async () => (await sql<{ t: string | null }>`SELECT to_regclass('developer_provider_locations_npi')::text AS t`.execute(t.db)).rows[0]!.t !== null;

describe('migration 0027', () => {
  test('every developer row of a written directory carries its provider\'s NPI', async () => {
    const n = await sql<{ n: number }>`SELECT count(*)::int AS n FROM developer_provider_locations WHERE npi IS NOT NULL`.execute(t.db);
    expect(n.rows[0]!.n).toBe(doc.provider_locations!.length);
    expect(await npiMismatches(t.db)).toEqual([]);
  });

  test('down() removes the copy; up() fills it from the directory written meanwhile, and writes keep it again', async () => {
    await down(t.db as unknown as Kysely<unknown>);
    expect(await hasColumn()).toBe(false);
    expect(await hasIndex()).toBe(false);

    // Written while the migration is not applied: a provider's new NPI, another developer's rows.
    const p0 = doc.providers![0]!;
    await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, { providers: [{ ...p0, npi: npi('199000001') }] }));
    const b = await newDeveloper(t, 'NPI copy B');
    await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, { provider_locations: doc.provider_locations!.slice(0, 20) }, { developerId: b.developer_id }));

    await up(t.db as unknown as Kysely<unknown>);
    expect(await hasColumn()).toBe(true);
    expect(await hasIndex()).toBe(true);
    expect(await npiMismatches(t.db)).toEqual([]);
    const renumbered = await sql<{ npi: string }>`
      SELECT DISTINCT dpl.npi FROM developer_provider_locations dpl
      JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id
      WHERE pl.provider_id = ${p0.id}`.execute(t.db);
    expect(renumbered.rows).toEqual([{ npi: npi('199000001') }]);

    // The triggers are back: a new NPI and a new developer's rows.
    await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, { providers: [p0] }));
    const c = await newDeveloper(t, 'NPI copy C');
    await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, { provider_locations: doc.provider_locations!.slice(10, 40) }, { developerId: c.developer_id }));
    expect(await npiMismatches(t.db)).toEqual([]);
    const back = await sql<{ n: number }>`SELECT count(*)::int AS n FROM developer_provider_locations WHERE npi = ${p0.npi}`.execute(t.db);
    expect(back.rows[0]!.n).toBeGreaterThan(0);
  });
});
