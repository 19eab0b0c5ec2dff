/**
 * The provider-location views follow directory writes at once (src/domain/directory/provider-location-view.ts,
 * src/domain/directory/provider-search.ts):
 * - GET /v1/providers (docs/api/directory.md#providers-by-npi) reads the caller's rows by the NPI copied
 *   onto them (migration 0027): a provider's new NPI, a deactivated provider-location and one
 *   reactivated show in the very next answer;
 * - specialty names come from the names kept by directory version (src/domain/directory/kept-reference.ts)
 *   only while the version the view's statement saw is theirs: a renamed specialty shows at once in
 *   every read that shows names, and the kept names follow.
 */
import { describe, expect, test } from 'vitest';
import { KeptReference } from '../../src/domain/directory/kept-reference.js';
import { loadProviderLocationViews, type ProviderLocationView } from '../../src/domain/directory/provider-location-view.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { StatementCapture } from '../helpers/statement-capture.js';
import { fixtureDocument, get, NPI, npi, PL, useDirectoryFixture } from './fixture.js';

const ctx = useDirectoryFixture();

// The statements run, told by their text (the capture also records the builders a statement embeds).
const isNamesRead = (q: { sql: string }): boolean => /^\s*SELECT \(SELECT version::text FROM directory_version\) AS v, \(\(select count\(\*\) as "n" from "specialties"/.test(q.sql);
const isView = (q: { sql: string }): boolean => q.sql.includes('json_agg(v) AS j');

const locationsOf = async (n: string): Promise<string[]> => {
  const r = await get(ctx.t, `/v1/providers?npis=${n}`, ctx.f.tokenA);
  expect(r.status).toBe(200);
  return (r.body.data[0].providers as { locations: { provider_location_id: string }[] }[]).flatMap((p) => p.locations.map((l) => l.provider_location_id)).sort();
};

describe('GET /v1/providers after directory writes', () => {
  test('a provider\'s new NPI finds it at once, and the old NPI no longer does (and back)', async () => {
    expect(await locationsOf(NPI.a1)).toEqual([PL.a1bk, PL.a1nyc].sort());
    const renumbered = npi('123000099');
    const a1 = fixtureDocument().providers!.find((p) => p.id === 'pr_a1')!;
    await ctx.t.db.transaction().execute((trx) => writeDirectory(trx, ctx.t.config.appEnv, { providers: [{ ...a1, npi: renumbered }] }));
    expect(await locationsOf(renumbered)).toEqual([PL.a1bk, PL.a1nyc].sort());
    expect(await locationsOf(NPI.a1)).toEqual([]);
    await ctx.t.db.transaction().execute((trx) => writeDirectory(trx, ctx.t.config.appEnv, { providers: [a1] }));
    expect(await locationsOf(NPI.a1)).toEqual([PL.a1bk, PL.a1nyc].sort());
    expect(await locationsOf(renumbered)).toEqual([]);
  });

  test('a deactivated provider-location leaves the answer, and comes back when reactivated', async () => {
    expect(await locationsOf(NPI.b1)).toEqual([PL.b1nyc]);
    const pl = (active: boolean) => ({ provider_id: 'pr_b1', location_id: 'lo_nyc2', active });
    await ctx.t.db.transaction().execute((trx) => writeDirectory(trx, ctx.t.config.appEnv, { provider_locations: [pl(false)] }));
    expect(await locationsOf(NPI.b1)).toEqual([]);
    await ctx.t.db.transaction().execute((trx) => writeDirectory(trx, ctx.t.config.appEnv, { provider_locations: [pl(true)] }));
    expect(await locationsOf(NPI.b1)).toEqual([PL.b1nyc]);
  });
});

const rename = async (name: string): Promise<void> => {
  const fam = fixtureDocument().specialties!.find((s) => s.id === 'sp_fam')!;
  await ctx.t.db.transaction().execute((trx) => writeDirectory(trx, ctx.t.config.appEnv, { specialties: [{ ...fam, name }] }));
};

/** The names each read that shows them gives for provider a1 (Family Medicine) at `PL.a1nyc`. */
const namesShown = async (): Promise<Record<string, string[]>> => {
  const byNpi = await get(ctx.t, `/v1/providers?npis=${NPI.a1}`, ctx.f.tokenA);
  const one = await get(ctx.t, `/v1/provider_locations/${encodeURIComponent(PL.a1nyc)}`, ctx.f.tokenA);
  const search = await get(ctx.t, '/v1/provider_locations?zip_code=10001&specialty_id=sp_fam', ctx.f.tokenA);
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
    const caller = { env: ctx.t.config.appEnv, developerId: ctx.f.devA.developer_id };
    const view = async () =>
      (await loadProviderLocationViews(ctx.t.db, caller, { ids: [PL.a1nyc], publicBaseUrl: 'http://x', availability: false, keep })).get(PL.a1nyc)!.provider.specialties;
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
    const caller = { env: ctx.t.config.appEnv, developerId: ctx.f.devA.developer_id };
    const capture = new StatementCapture();
    const db = capture.on(ctx.t.db);
    let views: Map<string, ProviderLocationView>[] = [];
    const statements = await capture.during(db, async () => {
      views = await Promise.all(
        Array.from({ length: 8 }, () => loadProviderLocationViews(db, caller, { ids: [PL.a1nyc, PL.b1nyc], publicBaseUrl: 'http://x', availability: false, keep })),
      );
    });
    for (const v of views) expect([...v.values()].map((x) => x.provider.specialties)).toEqual([['Family Medicine'], ['Family Medicine']]);
    expect(statements.filter(isNamesRead)).toHaveLength(1);
    expect(statements.filter(isView)).toHaveLength(8);
    expect(keep.specialtyNames(caller.env)?.names.get('sp_fam')).toBe('Family Medicine');
  });

  test('above the bound no names are kept, the views compute them, and the names are not read again until the version moves', async () => {
    const keep = new KeptReference(undefined, 1);
    const caller = { env: ctx.t.config.appEnv, developerId: ctx.f.devA.developer_id };
    const capture = new StatementCapture();
    const db = capture.on(ctx.t.db);
    const view = () => loadProviderLocationViews(db, caller, { ids: [PL.a1nyc], publicBaseUrl: 'http://x', availability: false, keep });
    const namesReads = async () => (await capture.during(db, view)).filter(isNamesRead).length;
    expect(await namesReads()).toBe(1);
    expect(keep.specialtyNames(caller.env)).toBeUndefined();
    expect([...(await view()).values()][0]!.provider.specialties).toEqual(['Family Medicine']);
    expect(await namesReads()).toBe(0);
    await rename('Family Medicine');
    expect(await namesReads()).toBe(1);
    expect(await namesReads()).toBe(0);
  });

  test('a failed read of the names leaves them unkept and the answer whole', async () => {
    const keep = new KeptReference();
    const caller = { env: ctx.t.config.appEnv, developerId: ctx.f.devA.developer_id };
    keep.readSpecialtyNamesOlderThan = () => Promise.reject(new Error('the names could not be read'));
    const views = await loadProviderLocationViews(ctx.t.db, caller, { ids: [PL.a1nyc], publicBaseUrl: 'http://x', availability: false, keep });
    expect(views.get(PL.a1nyc)!.provider.specialties).toEqual(['Family Medicine']);
    expect(keep.specialtyNames(caller.env)).toBeUndefined();
  });
});
