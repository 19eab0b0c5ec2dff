/**
 * Who may call the directory operations (docs/api/auth.md#scopes): anonymous tokens read providers,
 * provider-locations and reference data; user tokens read them too; schedulable entities need
 * `external.schedulable_entity.read` (user tokens may hold it, anonymous ones never); the
 * insurance-mapping update needs `external.provider_insurance.write`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.js';
import { anonymousToken, userToken } from '../helpers/auth.js';
import { get, loadFixture, NPI, PL, type DirectoryFixture } from './fixture.js';

let t: TestApp;
let f: DirectoryFixture;
let anon: string;
let user: string;
let anonB: string;
beforeAll(async () => {
  t = await testApp();
  f = await loadFixture(t);
  anon = await anonymousToken(t, f.devA);
  anonB = await anonymousToken(t, f.devB);
  user = await userToken(t, f.devA, { email: 'patient@example.org', password: 'correct horse battery staple' });
});
afterAll(async () => t?.close());

const enc = encodeURIComponent;
const READS = [
  '/v1/reference/npi',
  `/v1/providers?npis=${NPI.a1}`,
  '/v1/provider_locations?zip_code=10001&specialty_id=sp_fam',
  `/v1/provider_locations/${enc(PL.a1nyc)}`,
  `/v1/provider_locations/${enc(PL.a1nyc)}/insurance_mappings`,
  '/v1/specialties',
  '/v1/specialties/sp_fam',
  '/v1/visit_reasons',
  '/v1/visit_reasons/pc_fam_1',
  '/v1/insurance_plans',
  '/v1/insurance_plans/ip_acme_ppo',
  '/v1-beta/facilities?zip_code=10001',
  '/v1-beta/facilities/fa_nyc',
];

describe('anonymous and user tokens', () => {
  test.each(READS)('GET %s answers anonymous and user tokens from the developer directory', async (url) => {
    expect((await get(t, url, anon)).status).toBe(200);
    expect((await get(t, url, user)).status).toBe(200);
  });

  test("an anonymous token sees its own developer's directory only", async () => {
    const a = await get(t, '/v1/reference/npi', anon);
    expect(a.body.data.npis).toContain(NPI.a1);
    expect(a.body.data.npis).not.toContain(NPI.other);
    const b = await get(t, '/v1/reference/npi', anonB);
    expect(b.body.data.npis).toEqual([NPI.other]);
    expect((await get(t, `/v1/provider_locations/${enc(PL.a1nyc)}`, anonB)).status).toBe(404);
  });

  test('schedulable entities: user token with the scope 200, anonymous 403', async () => {
    const u = await get(t, '/v1/schedulable_entities', user);
    expect(u.status).toBe(200);
    expect(u.body.total_count).toBe(5);
    const a = await get(t, '/v1/schedulable_entities', anon);
    expect(a.status).toBe(403);
    expect(a.body.error_type).toBe('invalid_request');
  });

  test('insurance mapping update: anonymous and user tokens are refused', async () => {
    for (const token of [anon, user]) {
      const r = await t.app.inject({
        method: 'POST',
        url: `/v1/provider_locations/${enc(PL.a1nyc)}/insurance_mappings`,
        headers: { authorization: `Bearer ${token}` },
        payload: { insurance_plan_ids: ['ip_acme_hmo'], operation: 'Add' },
      });
      expect(r.statusCode).toBe(403);
    }
  });
});
