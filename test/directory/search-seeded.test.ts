/**
 * Migration 0008 on a generated directory: the search answers exactly as the base-table query it
 * replaced, the listings walk the developer's active rows, and the migration fills its derived data
 * from a directory written before it.
 */
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { down, up } from '../../src/db/migrations/0008_directory_search.js';
import type { DirectoryDocument } from '../../src/domain/directory/document.js';
import { zipCentroid } from '../../src/domain/directory/geo.js';
import { searchProviderLocations, type ProviderLocationSearch, type SearchVisitType } from '../../src/domain/directory/provider-location-search.js';
import { listSchedulableEntities } from '../../src/domain/directory/schedulable-entities.js';
import { generateDirectory } from '../../src/domain/directory/seed.js';
import type { DirectoryCaller } from '../../src/domain/directory/visible.js';
import { analyzeDirectory } from '../../src/domain/directory/write/analyze.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { activeMismatches, expectedSearchRows, oracleSearch, storedSearchRows } from './search-oracle.js';
import { scaled } from '../helpers/scale.js';

let t: TestApp;
let doc: DirectoryDocument;
let mine: DirectoryCaller;
let partial: DirectoryCaller;
const HOUR = 3600e3;

beforeAll(async () => {
  t = await testApp();
  const env = t.config.appEnv;
  doc = generateDirectory(240, 7);
  const a = await newDeveloper(t, 'Seeded A');
  const b = await newDeveloper(t, 'Seeded B');
  mine = { env, developerId: a.developer_id } as DirectoryCaller;
  partial = { env, developerId: b.developer_id } as DirectoryCaller;
  await t.db.transaction().execute((trx) => writeDirectory(trx, env, doc, { developerId: a.developer_id }));
  // Developer B sees every third provider-location; one in eight is deactivated.
  const pls = doc.provider_locations!;
  await t.db.insertInto('developer_provider_locations')
    .values(pls.filter((_, i) => i % 3 === 0).map((p) => ({ env, developer_id: b.developer_id, provider_location_id: `${p.provider_id}|${p.location_id}` })))
    .execute();
  await t.db.transaction().execute((trx) =>
    writeDirectory(trx, env, { provider_locations: pls.filter((_, i) => i % 8 === 5).map((p) => ({ ...p, active: false })) }),
  );
  // As every import does (the oracle's joins take a second per query on PGlite without statistics).
  await analyzeDirectory(t.db);
}, scaled(120_000));
afterAll(async () => t?.close());

describe('search on a generated directory', () => {
  test('every combination of filters answers as the base-table query', async () => {
    const { rows: zipRows } = await sql<{ zip_code: string }>`
      SELECT DISTINCT zip_code FROM locations WHERE zip_code IS NOT NULL ORDER BY zip_code LIMIT 6`.execute(t.db);
    const zips = [...new Set(['10001', ...zipRows.map((r) => r.zip_code)])].filter((z) => zipCentroid(z));
    const byProvider = new Map(doc.providers!.map((p) => [p.id, p]));
    const used = doc.provider_locations!.map((p) => byProvider.get(p.provider_id)!);
    const specialties = [...new Set(used.flatMap((p) => p.specialty_ids ?? []))].slice(0, 4);
    const reasonOf = (sp: string) => used.find((p) => p.specialty_ids?.includes(sp))!.visit_reason_ids!.at(-1)!;
    const plans = [...new Set(doc.provider_locations!.flatMap((p) => p.insurance_plan_ids ?? []))].slice(0, 2);
    const filters: Partial<ProviderLocationSearch>[] = [
      ...specialties.map((specialtyId) => ({ specialtyId })),
      ...specialties.slice(0, 2).map((sp) => ({ visitReasonId: reasonOf(sp) })),
      ...specialties.slice(0, 2).map((sp) => ({ specialtyId: sp, visitReasonId: reasonOf(sp) })),
      { specialtyId: specialties[0]!, visitReasonId: reasonOf(specialties[1]!) },
      ...plans.map((insurancePlanId) => ({ specialtyId: specialties[0]!, insurancePlanId })),
      { visitReasonId: reasonOf(specialties[1]!), insurancePlanId: plans[0]! },
    ];
    let compared = 0;
    let nonEmpty = 0;
    for (const caller of [mine, partial]) {
      for (const zip of zips) {
        for (const filter of filters) {
          for (const [visitType, maxDistanceMi] of [['all', 50], ['in_person', 100], ['video_visit', 10], ['all', 500]] as [SearchVisitType, number][]) {
            for (const page of [0, 40]) {
              const q: ProviderLocationSearch = { origin: zipCentroid(zip)!, visitType, maxDistanceMi, page, pageSize: 4, ...filter };
              const got = await searchProviderLocations(t.db, caller, q);
              expect(got, JSON.stringify({ caller: caller.developerId, zip, ...filter, visitType, maxDistanceMi, page })).toEqual(await oracleSearch(t.db, caller, q));
              compared += 1;
              if (got.hits.length) nonEmpty += 1;
            }
          }
        }
      }
    }
    // The comparison is not vacuous.
    expect(compared).toBeGreaterThan(500);
    expect(nonEmpty).toBeGreaterThan(100);
  }, scaled(120_000));
});

describe('listings on a generated directory', () => {
  const list = (caller: DirectoryCaller, q: { page: number; pageSize: number; recentOnly?: boolean; now?: Date; recentWindowReadMax?: number }) =>
    listSchedulableEntities(t.db, caller, { publicBaseUrl: 'http://x', recentOnly: false, ...q });

  async function activeIds(caller: DirectoryCaller): Promise<string[]> {
    const { rows } = await sql<{ id: string }>`
      SELECT pl.id FROM developer_provider_locations dpl
      JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id AND pl.active
      WHERE dpl.developer_id = ${caller.developerId} ORDER BY pl.id`.execute(t.db);
    return rows.map((r) => r.id);
  }

  test('pages walk the active directory in id order with its total', async () => {
    for (const caller of [mine, partial]) {
      const expected = await activeIds(caller);
      const seen: string[] = [];
      for (let page = 0; ; page++) {
        const r = await list(caller, { page, pageSize: 37 });
        expect(r.total).toBe(expected.length);
        if (!r.entities.length) break;
        seen.push(...r.entities.map((e) => e.id));
      }
      expect(seen).toEqual(expected);
    }
  });

  test('recent_changes_72hrs: the window read and the directory walk list the same entities', async () => {
    const env = t.config.appEnv;
    const past = new Date(Date.now() - 100 * HOUR);
    await t.db.updateTable('developer_provider_locations').set({ added_at: past }).execute();
    await t.db.updateTable('directory_changes').set({ changed_at: past }).execute();
    await t.db.updateTable('provider_locations').set({ go_live_at: past, profile_updated_at: past }).execute();
    // Recent: a renamed provider (profile), a reactivated provider-location, one joining B's directory.
    const pls = doc.provider_locations!;
    const renamed = doc.providers!.find((p) => pls.some((pl) => pl.provider_id === p.id))!;
    await t.db.transaction().execute(async (trx) => {
      await writeDirectory(trx, env, { providers: [{ ...renamed, last_name: `${renamed.last_name}-Renamed` }] });
      await writeDirectory(trx, env, { provider_locations: [pls[5]!] });
      await writeDirectory(trx, env, { provider_locations: [pls[1]!] }, { developerId: partial.developerId });
    });
    const expectRecent = (ids: string[], caller: DirectoryCaller) => {
      const shown = ids.join(' ');
      if (caller === partial) expect(shown).toContain(`${pls[1]!.provider_id}|${pls[1]!.location_id}`);
      else expect(shown).toContain(`${pls[5]!.provider_id}|${pls[5]!.location_id}`);
    };
    for (const caller of [mine, partial]) {
      const walk = await list(caller, { page: 0, pageSize: 1000, recentOnly: true, recentWindowReadMax: 1 });
      const window = await list(caller, { page: 0, pageSize: 1000, recentOnly: true });
      const brief = (r: typeof walk) => r.entities.map((e) => [e.id, e.go_live_timestamp_utc, e.profile_last_modified_timestamp_utc]);
      expect(brief(window)).toEqual(brief(walk));
      expect(window.total).toBe(walk.total);
      expect(walk.total).toBeGreaterThan(0);
      expectRecent(walk.entities.map((e) => e.id), caller);
      // Paged, both ways.
      for (const recentWindowReadMax of [1, undefined]) {
        const first = await list(caller, { page: 0, pageSize: 1, recentOnly: true, ...(recentWindowReadMax ? { recentWindowReadMax } : {}) });
        const beyond = await list(caller, { page: 50, pageSize: 1, recentOnly: true, ...(recentWindowReadMax ? { recentWindowReadMax } : {}) });
        expect(first.entities.map((e) => e.id)).toEqual([walk.entities[0]!.id]);
        expect([first.total, beyond.total, beyond.entities.length]).toEqual([walk.total, walk.total, 0]);
      }
    }
  });
});

describe('migration 0008', () => {
  test('down() removes its table, column and triggers; up() fills them from the directory written before it', async () => {
    const rows = await storedSearchRows(t.db);
    const flags = async () => (await sql<{ r: string }>`
      SELECT developer_id || ' ' || provider_location_id || ' ' || active AS r FROM developer_provider_locations ORDER BY 1`.execute(t.db)).rows.map((x) => x.r);
    const before = await flags();
    expect(rows.length).toBeGreaterThan(300);
    expect(before.some((r) => r.endsWith(' false'))).toBe(true);

    await down(t.db as unknown as Kysely<unknown>);
    expect((await sql<{ t: string | null }>`SELECT to_regclass('provider_location_search')::text AS t`.execute(t.db)).rows[0]!.t).toBeNull();
    const column = await sql`SELECT 1 FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'developer_provider_locations' AND column_name = 'active'`.execute(t.db);
    expect(column.rows).toEqual([]);
    // Written while the migration is not applied: a provider-location deactivated, another reactivated.
    const pls = doc.provider_locations!;
    const id = (i: number) => `${pls[i]!.provider_id}|${pls[i]!.location_id}`;
    await t.db.transaction().execute(async (trx) => {
      await trx.updateTable('provider_locations').set({ active: false }).where('id', '=', id(0)).execute();
      await trx.updateTable('provider_locations').set({ active: true }).where('id', '=', id(13)).execute();
    });

    await up(t.db as unknown as Kysely<unknown>);
    expect(await storedSearchRows(t.db)).toEqual(await expectedSearchRows(t.db));
    expect(await activeMismatches(t.db)).toEqual([]);
    expect(await storedSearchRows(t.db)).not.toEqual(rows);
    const flagged = await flags();
    expect(flagged).not.toEqual(before);
    const flagsOf = (i: number) => flagged.filter((r) => r.includes(` ${id(i)} `)).map((r) => r.split(' ')[2]);
    expect(flagsOf(0)).toEqual(['false', 'false']); // developers A and B
    expect(flagsOf(13)).toEqual(['true']);
    // The triggers are back: a write through the directory keeps the copy.
    await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, { provider_locations: [{ ...pls[3]!, active: false }] }));
    expect(await storedSearchRows(t.db)).toEqual(await expectedSearchRows(t.db));
    expect(await activeMismatches(t.db)).toEqual([]);
    expect((await flags()).filter((r) => r.includes(` ${id(3)} `)).every((r) => r.endsWith(' false'))).toBe(true);
  });
});
