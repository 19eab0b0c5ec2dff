/**
 * The derived search data of migrations 0008 and 0021 follows every directory write:
 * `provider_location_search` (refreshed by `writeDirectory`), `developer_provider_locations.active`,
 * the directory sizes and the facilities' coordinates (kept by triggers). After each change, the
 * stored rows equal a recomputation from the base tables, and the search answers as the base-table
 * query it replaced (`oracleSearch`).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { DirectoryDocument } from '../../src/domain/directory/document.js';
import { zipCentroid } from '../../src/domain/directory/geo.js';
import { searchProviderLocations, type ProviderLocationSearch } from '../../src/domain/directory/provider-location-search.js';
import { listSchedulableEntities } from '../../src/domain/directory/schedulable-entities.js';
import type { DirectoryCaller } from '../../src/domain/directory/visible.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { fixtureDocument, loadFixture, npi, PL, type DirectoryFixture } from './fixture.js';
import { facilitiesById, searchFacilities } from '../../src/domain/directory/facilities.js';
import { activeMismatches, expectedSearchRows, facilityCoordinateMismatches, npiMismatches, oracleSearch, sizeMismatches, storedSearchRows } from './search-oracle.js';

let t: TestApp;
let f: DirectoryFixture;
let devA: DirectoryCaller;
beforeAll(async () => {
  t = await testApp();
  f = await loadFixture(t);
  devA = { env: t.config.appEnv, developerId: f.devA.developer_id } as DirectoryCaller;
});
afterAll(async () => t?.close());

const doc = fixtureDocument();
const provider = (id: string) => doc.providers!.find((p) => p.id === id)!;
const location = (id: string) => doc.locations!.find((l) => l.id === id)!;
const providerLocation = (id: string) => doc.provider_locations!.find((p) => `${p.provider_id}|${p.location_id}` === id)!;

async function write(d: DirectoryDocument, developerId?: string): Promise<void> {
  await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, d, developerId ? { developerId } : {}));
}

/** Ids found from `zip` (50 mi, first page of 50), after checking them against the oracle. */
async function found(zip: string, q: Partial<ProviderLocationSearch>, caller: DirectoryCaller = devA): Promise<string[]> {
  const query: ProviderLocationSearch = { origin: zipCentroid(zip)!, visitType: 'all', maxDistanceMi: 50, page: 0, pageSize: 50, ...q };
  const got = await searchProviderLocations(t.db, caller, query);
  expect(got).toEqual(await oracleSearch(t.db, caller, query));
  return got.hits.map((h) => h.id);
}

/** The stored derived data equals what the base tables call for. */
async function expectInSync(): Promise<void> {
  expect(await storedSearchRows(t.db)).toEqual(await expectedSearchRows(t.db));
  expect(await activeMismatches(t.db)).toEqual([]);
  expect(await npiMismatches(t.db)).toEqual([]);
  expect(await sizeMismatches(t.db)).toEqual([]);
  expect(await facilityCoordinateMismatches(t.db)).toEqual([]);
}

async function dplActive(developerId: string, plId: string): Promise<boolean | undefined> {
  const r = await t.db.selectFrom('developer_provider_locations').select('active')
    .where('developer_id', '=', developerId).where('provider_location_id', '=', plId).executeTakeFirst();
  return r?.active;
}

describe('provider_location_search follows directory writes', () => {
  test('the fixture: one row per active provider-location and term; search as before', async () => {
    await expectInSync();
    const rows = await sql<{ term: string }>`SELECT term FROM provider_location_search WHERE provider_location_id = ${PL.a1nyc} ORDER BY term`.execute(t.db);
    expect(rows.rows.map((r) => r.term)).toEqual(['sp:sp_fam', 'vr:pc_fam_1', 'vr:pc_fam_2']);
    expect((await sql`SELECT 1 FROM provider_location_search WHERE provider_location_id = ${PL.gone}`.execute(t.db)).rows).toEqual([]);
    expect(await found('10001', { specialtyId: 'sp_fam' })).toEqual([PL.a1nyc, PL.b1nyc, PL.a1bk, PL.virt]);
    expect(await found('10001', { specialtyId: 'sp_fam', visitReasonId: 'pc_fam_2', insurancePlanId: 'ip_acme_ppo' })).toEqual([PL.a1nyc, PL.b1nyc]);
    expect(await found('10001', { visitReasonId: 'pc_fam_1', visitType: 'video_visit' })).toEqual([PL.virt]);
    await expect(searchProviderLocations(t.db, devA, { origin: zipCentroid('10001')!, visitType: 'all', maxDistanceMi: 50, page: 0, pageSize: 5 }))
      .rejects.toMatchObject({ kind: 'invalid', errors: [{ field: 'specialty_id' }] });
  });

  test("a re-import that changes a provider's specialty and visit reasons moves its provider-locations between searches", async () => {
    await write({ providers: [{ ...provider('pr_a1'), main_specialty_id: 'sp_dent', specialty_ids: ['sp_dent'], default_visit_reason_id: 'pc_dent_1', visit_reason_ids: ['pc_dent_1'] }] });
    await expectInSync();
    expect(await found('10001', { specialtyId: 'sp_fam' })).toEqual([PL.b1nyc, PL.virt]);
    expect(await found('10001', { specialtyId: 'sp_dent' })).toEqual([PL.a1nyc, PL.a1bk]);
    expect(await found('10001', { visitReasonId: 'pc_dent_1', specialtyId: 'sp_dent' })).toEqual([PL.a1nyc, PL.a1bk]);
    expect(await found('10001', { visitReasonId: 'pc_fam_1' })).toEqual([PL.b1nyc, PL.virt]);

    // Visit reasons alone (not a profile field, so no "profile updated"): the search follows too.
    await write({ providers: [{ ...provider('pr_b1'), visit_reason_ids: ['pc_fam_1'] }] });
    await expectInSync();
    expect(await found('10001', { visitReasonId: 'pc_fam_2' })).toEqual([PL.virt]);
    expect(await found('10001', { visitReasonId: 'pc_fam_1' })).toEqual([PL.b1nyc, PL.virt]);
    // A specialty id listed twice gives one row.
    await write({ providers: [{ ...provider('pr_b1'), specialty_ids: ['sp_fam', 'sp_fam'] }] });
    await expectInSync();

    await write({ providers: [provider('pr_a1'), provider('pr_b1')] });
    await expectInSync();
    expect(await found('10001', { specialtyId: 'sp_fam' })).toEqual([PL.a1nyc, PL.b1nyc, PL.a1bk, PL.virt]);
  });

  test("a provider's new NPI reaches its developers' rows (migration 0027), and back", async () => {
    const renumbered = npi('123000098');
    await write({ providers: [{ ...provider('pr_a1'), npi: renumbered }] });
    await expectInSync();
    const copies = await t.db.selectFrom('developer_provider_locations').select('npi').where('provider_location_id', 'in', [PL.a1nyc, PL.a1bk]).execute();
    expect(copies.length).toBeGreaterThan(1);
    expect(new Set(copies.map((c) => c.npi))).toEqual(new Set([renumbered]));
    await write({ providers: [provider('pr_a1')] });
    await expectInSync();
  });

  test('moving a location moves its provider-locations; a virtual location follows its state', async () => {
    await write({ locations: [{ ...location('lo_nyc2'), city: 'Philadelphia', state: 'PA', zip_code: '19103', latitude: 39.95, longitude: -75.17 }] });
    await expectInSync();
    expect(await found('10001', { specialtyId: 'sp_fam' })).toEqual([PL.a1nyc, PL.a1bk, PL.virt]);
    expect(await found('19103', { specialtyId: 'sp_fam' })).toEqual([PL.b1nyc]);

    await write({ locations: [{ ...location('lo_virt_ny'), state: 'NJ' }] });
    await expectInSync();
    expect(await found('10001', { specialtyId: 'sp_fam', visitType: 'video_visit' })).toEqual([]);
    expect(await found('07030', { specialtyId: 'sp_fam' })).toEqual([PL.a1nyc, PL.a1bk, PL.virt]);

    await write({ locations: [location('lo_nyc2'), location('lo_virt_ny')] });
    await expectInSync();
    expect(await found('10001', { specialtyId: 'sp_fam' })).toEqual([PL.a1nyc, PL.b1nyc, PL.a1bk, PL.virt]);
  });

  test('an in-person provider-location that becomes a virtual provider is searched as virtual', async () => {
    await write({ provider_locations: [{ ...providerLocation(PL.a1bk), provider_location_type: 'virtual_provider' }] });
    await expectInSync();
    expect(await found('10001', { specialtyId: 'sp_fam', visitType: 'video_visit' })).toEqual([PL.a1bk, PL.virt]);
    expect(await found('10001', { specialtyId: 'sp_fam', visitType: 'in_person' })).toEqual([PL.a1nyc, PL.b1nyc]);
    await write({ provider_locations: [providerLocation(PL.a1bk)] });
    await expectInSync();
  });

  test('deactivation and reactivation: search rows, developer rows and listings follow', async () => {
    const listed = async () => (await listSchedulableEntities(t.db, devA, { page: 0, pageSize: 100, recentOnly: false, publicBaseUrl: 'http://x' })).entities.map((e) => e.id);
    expect(await listed()).toContain(PL.a1nyc);
    await write({ provider_locations: [{ ...providerLocation(PL.a1nyc), active: false }] });
    await expectInSync();
    expect(await dplActive(f.devA.developer_id, PL.a1nyc)).toBe(false);
    expect(await found('10001', { specialtyId: 'sp_fam' })).toEqual([PL.b1nyc, PL.a1bk, PL.virt]);
    expect(await listed()).not.toContain(PL.a1nyc);

    await write({ provider_locations: [providerLocation(PL.a1nyc)] });
    await expectInSync();
    expect(await dplActive(f.devA.developer_id, PL.a1nyc)).toBe(true);
    expect(await found('10001', { specialtyId: 'sp_fam' })).toEqual([PL.a1nyc, PL.b1nyc, PL.a1bk, PL.virt]);
    expect(await listed()).toContain(PL.a1nyc);
  });

  test('a re-import of an unchanged document rewrites no search row', async () => {
    await write(fixtureDocument());
    await expectInSync();
    const versions = async () => (await sql<{ v: string }>`
      SELECT provider_location_id || ' ' || term || ' ' || xmin::text AS v FROM provider_location_search ORDER BY 1`.execute(t.db)).rows.map((r) => r.v);
    const before = await versions();
    expect(before.length).toBeGreaterThan(10);
    await write(fixtureDocument());
    expect(await versions()).toEqual(before);
  });
});

describe('developer_provider_locations.active', () => {
  test('a developer added later starts with the provider-location\'s flag, whoever inserts the row', async () => {
    const devC = await newDeveloper(t, 'Developer C');
    await t.db.insertInto('developer_provider_locations')
      .values([PL.gone, PL.a2phl].map((id) => ({ env: t.config.appEnv, developer_id: devC.developer_id, provider_location_id: id })))
      .execute();
    expect(await dplActive(devC.developer_id, PL.gone)).toBe(false);
    expect(await dplActive(devC.developer_id, PL.a2phl)).toBe(true);

    // Through an import for a developer: the inactive provider-location joins inactive.
    const devD = await newDeveloper(t, 'Developer D');
    await write({ provider_locations: [providerLocation(PL.gone), providerLocation(PL.out)] }, devD.developer_id);
    expect(await dplActive(devD.developer_id, PL.gone)).toBe(false);
    expect(await dplActive(devD.developer_id, PL.out)).toBe(true);
    await expectInSync();

    // Reactivation and deactivation reach every developer's row.
    await write({ provider_locations: [{ ...providerLocation(PL.gone), active: true }] });
    expect(await dplActive(f.devA.developer_id, PL.gone)).toBe(true);
    expect(await dplActive(devC.developer_id, PL.gone)).toBe(true);
    expect(await dplActive(devD.developer_id, PL.gone)).toBe(true);
    await expectInSync();
    const listedC = await listSchedulableEntities(t.db, { env: t.config.appEnv, developerId: devC.developer_id } as DirectoryCaller,
      { page: 0, pageSize: 10, recentOnly: false, publicBaseUrl: 'http://x' });
    expect(listedC.entities.map((e) => e.id)).toEqual([PL.a2phl, PL.gone].sort());
    expect(listedC.total).toBe(2);

    await write({ provider_locations: [providerLocation(PL.gone)] });
    expect(await dplActive(devC.developer_id, PL.gone)).toBe(false);
    await expectInSync();
    const again = await listSchedulableEntities(t.db, { env: t.config.appEnv, developerId: devC.developer_id } as DirectoryCaller,
      { page: 0, pageSize: 10, recentOnly: false, publicBaseUrl: 'http://x' });
    expect(again.entities.map((e) => e.id)).toEqual([PL.a2phl]);
    expect(again.total).toBe(1);
  });
});

describe('directory sizes and facility coordinates (migration 0021)', () => {
  const facilitiesNear = async (zip: string) =>
    (await searchFacilities(t.db, devA, { origin: zipCentroid(zip)!, maxDistanceMi: 10, page: 0, pageSize: 10 }, 'http://x')).items.map((i) => i.facility_id);

  test('a facility follows its location when it moves, and has no coordinates at a virtual one', async () => {
    expect(await facilitiesNear('10001')).toEqual(['fa_nyc']);
    await write({ locations: [{ ...location('lo_nyc'), city: 'Philadelphia', state: 'PA', zip_code: '19103', latitude: 39.95, longitude: -75.17 }] });
    await expectInSync();
    expect(await facilitiesNear('10001')).toEqual([]);
    expect(await facilitiesNear('19103')).toEqual(['fa_phl', 'fa_nyc']);
    await write({ locations: [location('lo_nyc')] });
    await expectInSync();
    expect(await facilitiesNear('10001')).toEqual(['fa_nyc']);

    // Re-pointed to a virtual provider-location, then back.
    const fa = doc.facilities!.find((x) => x.id === 'fa_nyc')!;
    await write({ facilities: [{ ...fa, provider_location_id: PL.virt }] });
    await expectInSync();
    expect((await sql<{ lat: number | null }>`SELECT latitude AS lat FROM facilities WHERE id = 'fa_nyc'`.execute(t.db)).rows[0]!.lat).toBeNull();
    expect(await facilitiesNear('10001')).toEqual([]);
    await write({ facilities: [fa] });
    await expectInSync();
    expect(await facilitiesNear('10001')).toEqual(['fa_nyc']);

    // A facility of a deactivated provider-location is not found, nor read.
    await write({ provider_locations: [{ ...providerLocation(PL.a1nyc), active: false }] });
    expect(await facilitiesNear('10001')).toEqual([]);
    expect(await facilitiesById(t.db, devA, ['fa_nyc'], 'http://x')).toEqual([]);
    await write({ provider_locations: [providerLocation(PL.a1nyc)] });
    expect(await facilitiesNear('10001')).toEqual(['fa_nyc']);
    expect((await facilitiesById(t.db, devA, ['fa_nyc'], 'http://x')).map((x) => x.facility_id)).toEqual(['fa_nyc']);
  });

  test('sizes follow rows deleted and a truncation', async () => {
    const sizeOf = async (developerId: string) =>
      (await sql<{ n: string }>`SELECT active_count AS n FROM developer_directory_sizes WHERE developer_id = ${developerId}`.execute(t.db)).rows[0]?.n;
    const listedTotal = async () => (await listSchedulableEntities(t.db, devA, { page: 0, pageSize: 1, recentOnly: false, publicBaseUrl: 'http://x' })).total;
    const total = await listedTotal();
    expect(Number(await sizeOf(f.devA.developer_id))).toBe(total);
    await t.db.deleteFrom('developer_provider_locations').where('developer_id', '=', f.devA.developer_id).where('provider_location_id', '=', PL.a1bk).execute();
    await expectInSync();
    expect(await listedTotal()).toBe(total - 1);
    await write({ provider_locations: [providerLocation(PL.a1bk)] }, f.devA.developer_id);
    await expectInSync();
    expect(await listedTotal()).toBe(total);

    // A truncation empties the sizes (in a transaction rolled back: the rest of the file keeps its directory).
    const rolledBack = new Error('roll back');
    await expect(
      t.db.transaction().execute(async (trx) => {
        await sql`TRUNCATE developer_provider_locations`.execute(trx);
        expect((await sql`SELECT 1 FROM developer_directory_sizes`.execute(trx)).rows).toEqual([]);
        throw rolledBack;
      }),
    ).rejects.toBe(rolledBack);
    await expectInSync();
  });
});
