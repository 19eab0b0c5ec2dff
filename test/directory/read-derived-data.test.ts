/**
 * Migration 0021 on a generated directory: `down()` removes the directory sizes and the facilities'
 * coordinates with their triggers, and `up()` fills them from a directory written before it (here,
 * changed while the migration was not applied), after which directory writes keep them again.
 */
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { down, up } from '../../src/db/migrations/0021_directory_reads.js';
import type { DirectoryDocument } from '../../src/domain/directory/document.js';
import { generateDirectory } from '../../src/domain/directory/seed.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { scaled } from '../helpers/scale.js';
import { facilityCoordinateMismatches, sizeMismatches } from './search-oracle.js';

let t: TestApp;
let doc: DirectoryDocument;

beforeAll(async () => {
  t = await testApp();
  doc = generateDirectory(240, 21);
  const a = await newDeveloper(t, 'Sizes A');
  const b = await newDeveloper(t, 'Sizes B');
  await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, doc, { developerId: a.developer_id }));
  const pls = doc.provider_locations!;
  await t.db.insertInto('developer_provider_locations')
    .values(pls.filter((_, i) => i % 4 === 0).map((p) => ({ env: t.config.appEnv, developer_id: b.developer_id, provider_location_id: `${p.provider_id}|${p.location_id}` })))
    .execute();
}, scaled(60_000));
afterAll(async () => t?.close());

const exists = async (relation: string) =>
  (await sql<{ t: string | null }>`SELECT to_regclass(${relation})::text AS t`.execute(t.db)).rows[0]!.t !== null;
const columns = async () =>
  (await sql<{ c: string }>`SELECT column_name AS c FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'facilities' AND column_name IN ('latitude', 'longitude') ORDER BY 1`.execute(t.db)).rows.map((r) => r.c);

describe('migration 0021', () => {
  test('the sizes and coordinates of a written directory are right', async () => {
    const sizes = await sql<{ n: string }>`SELECT active_count AS n FROM developer_directory_sizes ORDER BY 1`.execute(t.db);
    expect(sizes.rows.length).toBeGreaterThanOrEqual(2);
    expect(await sizeMismatches(t.db)).toEqual([]);
    expect(doc.facilities!.length).toBeGreaterThan(3);
    expect(await facilityCoordinateMismatches(t.db)).toEqual([]);
    const placed = await sql<{ n: number }>`SELECT count(*)::int AS n FROM facilities WHERE latitude IS NOT NULL`.execute(t.db);
    expect(placed.rows[0]!.n).toBe(doc.facilities!.length);
  });

  test('down() removes them; up() fills them from the directory written meanwhile, and writes keep them again', async () => {
    await down(t.db as unknown as Kysely<unknown>);
    expect(await exists('developer_directory_sizes')).toBe(false);
    expect(await exists('facilities_geo')).toBe(false);
    expect(await columns()).toEqual([]);

    // Written while the migration is not applied: deactivations, a moved location, a new developer's rows.
    const pls = doc.provider_locations!;
    await t.db.transaction().execute((trx) =>
      writeDirectory(trx, t.config.appEnv, { provider_locations: pls.filter((_, i) => i % 5 === 1).map((p) => ({ ...p, active: false })) }),
    );
    const fa = doc.facilities![0]!;
    const locationId = fa.provider_location_id.split('|')[1]!;
    const moved = { ...doc.locations!.find((l) => l.id === locationId)!, city: 'Denver', state: 'CO', zip_code: '80202', latitude: 39.75, longitude: -105.0 };
    await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, { locations: [moved] }));
    const c = await newDeveloper(t, 'Sizes C');
    await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, { provider_locations: pls.slice(0, 30) }, { developerId: c.developer_id }));

    await up(t.db as unknown as Kysely<unknown>);
    expect(await columns()).toEqual(['latitude', 'longitude']);
    expect(await sizeMismatches(t.db)).toEqual([]);
    expect(await facilityCoordinateMismatches(t.db)).toEqual([]);
    const denver = await sql<{ lat: number }>`SELECT latitude AS lat FROM facilities WHERE id = ${fa.id}`.execute(t.db);
    expect(denver.rows[0]!.lat).toBe(39.75);

    // The triggers are back.
    await t.db.transaction().execute((trx) =>
      writeDirectory(trx, t.config.appEnv, { provider_locations: pls.filter((_, i) => i % 5 === 1).map((p) => ({ ...p, active: true })) }),
    );
    await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, { locations: [{ ...moved, latitude: 39.7, longitude: -104.9 }] }));
    expect(await sizeMismatches(t.db)).toEqual([]);
    expect(await facilityCoordinateMismatches(t.db)).toEqual([]);
  });
});
