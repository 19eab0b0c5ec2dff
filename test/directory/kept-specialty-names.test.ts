/**
 * Specialty names in the provider-location views (src/domain/directory/provider-location-view.ts)
 * come from the names kept by directory version (src/domain/directory/kept-reference.ts) only while
 * the version the view's statement saw is theirs: a renamed specialty shows at once in every read
 * that shows names, and the kept names follow.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { KeptReference } from '../../src/domain/directory/kept-reference.js';
import { loadProviderLocationViews, type ProviderLocationView } from '../../src/domain/directory/provider-location-view.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { StatementCapture } from '../helpers/statement-capture.js';
import { fixtureDocument, get, loadFixture, NPI, PL, type DirectoryFixture } from './fixture.js';

let t: TestApp;
let f: DirectoryFixture;
beforeAll(async () => {
  t = await testApp();
  f = await loadFixture(t);
});
afterAll(async () => t?.close());

const rename = async (name: string): Promise<void> => {
  const fam = fixtureDocument().specialties!.find((s) => s.id === 'sp_fam')!;
  await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, { specialties: [{ ...fam, name }] }));
};

/** The names each read that shows them gives for provider a1 (Family Medicine) at `PL.a1nyc`. */
const namesShown = async (): Promise<Record<string, string[]>> => {
  const byNpi = await get(t, `/v1/providers?npis=${NPI.a1}`, f.tokenA);
  const one = await get(t, `/v1/provider_locations/${encodeURIComponent(PL.a1nyc)}`, f.tokenA);
  const search = await get(t, '/v1/provider_locations?zip_code=10001&specialty_id=sp_fam', f.tokenA);
  for (const r of [byNpi, one, search]) expect(r.status).toBe(200);
  const found = (search.body.data.provider_locations as { provider_location_id: string; provider: { specialties: string[] } }[]).find((v) => v.provider_location_id === PL.a1nyc);
  return { byNpi: byNpi.body.data[0].providers[0].specialties, one: one.body.data.provider.specialties, search: found!.provider.specialties };
};

describe('specialty names kept by directory version', () => {
  test('a renamed specialty shows at once in every read, twice in a row (read, then kept)', async () => {
    const all = (name: string) => ({ byNpi: [name], one: [name], search: [name] });
    expect(await namesShown()).toEqual(all('Family Medicine'));
    expect(await namesShown()).toEqual(all('Family Medicine'));
    await rename('Family and Community Medicine');
    expect(await namesShown()).toEqual(all('Family and Community Medicine'));
    expect(await namesShown()).toEqual(all('Family and Community Medicine'));
    await rename('Family Medicine');
    expect(await namesShown()).toEqual(all('Family Medicine'));
  });

  test('kept names are used while their version holds, and read again once it moves', async () => {
    const keep = new KeptReference();
    const caller = { env: t.config.appEnv, developerId: f.devA.developer_id };
    const view = async () =>
      (await loadProviderLocationViews(t.db, caller, { ids: [PL.a1nyc], publicBaseUrl: 'http://x', availability: false, keep })).get(PL.a1nyc)!.provider.specialties;
    expect(keep.specialtyNames(caller.env)).toBeUndefined();
    expect(await view()).toEqual(['Family Medicine']);
    const kept = keep.specialtyNames(caller.env)!;
    expect(kept.names.get('sp_fam')).toBe('Family Medicine');
    // A name only the kept copy holds shows while the version is the same: the statement read none.
    kept.names.set('sp_fam', 'only in the kept names');
    expect(await view()).toEqual(['only in the kept names']);
    // Any directory write moves the version: the statement reads the names again, then they are kept again.
    await rename('Family Medicine');
    expect(await view()).toEqual(['Family Medicine']);
    const again = keep.specialtyNames(caller.env)!;
    expect(again.version).not.toBe(kept.version);
    expect(again.names.get('sp_fam')).toBe('Family Medicine');
    expect(await view()).toEqual(['Family Medicine']);
  });

  test('concurrent views that find no kept names read them once, and each statement of theirs reads the names itself', async () => {
    const keep = new KeptReference();
    const caller = { env: t.config.appEnv, developerId: f.devA.developer_id };
    const capture = new StatementCapture();
    const db = capture.on(t.db);
    let views: Map<string, ProviderLocationView>[] = [];
    const statements = await capture.during(db, async () => {
      views = await Promise.all(
        Array.from({ length: 8 }, () => loadProviderLocationViews(db, caller, { ids: [PL.a1nyc, PL.b1nyc], publicBaseUrl: 'http://x', availability: false, keep })),
      );
    });
    for (const v of views) expect([...v.values()].map((x) => x.provider.specialties)).toEqual([['Family Medicine'], ['Family Medicine']]);
    const namesReads = statements.filter((q) => /FROM specialties WHERE env/.test(q.sql));
    expect(namesReads).toHaveLength(1);
    expect(statements).toHaveLength(9);
    expect(keep.specialtyNames(caller.env)?.names.get('sp_fam')).toBe('Family Medicine');
  });

  test('above the bound no names are kept, the views compute them, and the names are not read again until the version moves', async () => {
    const keep = new KeptReference(undefined, 1);
    const caller = { env: t.config.appEnv, developerId: f.devA.developer_id };
    const capture = new StatementCapture();
    const db = capture.on(t.db);
    const view = () => loadProviderLocationViews(db, caller, { ids: [PL.a1nyc], publicBaseUrl: 'http://x', availability: false, keep });
    const namesReads = async () => (await capture.during(db, view)).filter((q) => /FROM specialties WHERE env/.test(q.sql)).length;
    expect(await namesReads()).toBe(1);
    expect(keep.specialtyNames(caller.env)).toBeUndefined();
    expect([...(await view()).values()][0]!.provider.specialties).toEqual(['Family Medicine']);
    expect(await namesReads()).toBe(0);
    await rename('Family Medicine');
    expect(await namesReads()).toBe(1);
    expect(await namesReads()).toBe(0);
  });
});
