/**
 * GET /v1/providers (docs/api/directory.md#providers-by-npi) follows later directory writes: the search
 * reads the caller's rows by the NPI copied onto them (migration 0027), so a provider's new NPI, a
 * deactivated provider-location and one reactivated must show at once, as they do in the directory.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { fixtureDocument, get, loadFixture, NPI, npi, PL, type DirectoryFixture } from './fixture.js';

let t: TestApp;
let f: DirectoryFixture;
beforeAll(async () => {
  t = await testApp();
  f = await loadFixture(t);
});
afterAll(async () => t?.close());

const locationsOf = async (n: string): Promise<string[]> => {
  const r = await get(t, `/v1/providers?npis=${n}`, f.tokenA);
  expect(r.status).toBe(200);
  return (r.body.data[0].providers as { locations: { provider_location_id: string }[] }[]).flatMap((p) => p.locations.map((l) => l.provider_location_id)).sort();
};

describe('GET /v1/providers after directory writes', () => {
  test('a provider\'s new NPI finds it at once, and the old NPI no longer does', async () => {
    expect(await locationsOf(NPI.a1)).toEqual([PL.a1bk, PL.a1nyc].sort());
    const renumbered = npi('123000099');
    const a1 = fixtureDocument().providers!.find((p) => p.id === 'pr_a1')!;
    await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, { providers: [{ ...a1, npi: renumbered }] }));
    expect(await locationsOf(renumbered)).toEqual([PL.a1bk, PL.a1nyc].sort());
    expect(await locationsOf(NPI.a1)).toEqual([]);
  });

  test('a deactivated provider-location leaves the answer, and comes back when reactivated', async () => {
    expect(await locationsOf(NPI.b1)).toEqual([PL.b1nyc]);
    const pl = (active: boolean) => ({ provider_id: 'pr_b1', location_id: 'lo_nyc2', active });
    await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, { provider_locations: [pl(false)] }));
    expect(await locationsOf(NPI.b1)).toEqual([]);
    await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, { provider_locations: [pl(true)] }));
    expect(await locationsOf(NPI.b1)).toEqual([PL.b1nyc]);
  });
});
