/** NPIs, specialties, visit reasons and insurance plans (docs/api/directory.md#reference-data, docs/api/conventions.md#additional-fields, docs/api/directory.md#specialties-and-visit-reasons). */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { expect400, fixtureDocument, get, loadFixture, npi, NPI, pathOf, type DirectoryFixture } from './fixture.js';

let t: TestApp;
let f: DirectoryFixture;
beforeAll(async () => {
  t = await testApp();
  f = await loadFixture(t);
});
afterAll(async () => t?.close());

describe('GET /v1/reference/npi', () => {
  test('lists the distinct NPIs of active provider-locations in the caller directory only', async () => {
    const r = await get(t, '/v1/reference/npi', f.tokenA);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ page: 0, total_count: 4, next_url: null });
    expect(typeof r.body.request_id).toBe('string');
    expect(r.body.data.npis).toEqual([NPI.a1, NPI.a2, NPI.b1, NPI.virt].sort());
    // Outside the directory, inactive, and another developer's: absent.
    expect(r.body.data.npis).not.toContain(NPI.out);
    expect(r.body.data.npis).not.toContain(NPI.gone);
    expect(r.body.data.npis).not.toContain(NPI.other);
    const b = await get(t, '/v1/reference/npi', f.tokenB);
    expect(b.body.data.npis).toEqual([NPI.other]);
  });

  test('pages with a working next_url, null on the last page', async () => {
    const p0 = await get(t, '/v1/reference/npi?page_size=3', f.tokenA);
    expect(p0.body).toMatchObject({ page: 0, page_size: 3, total_count: 4 });
    expect(p0.body.next_url).toMatch(new RegExp(`^${t.config.publicBaseUrl}/v1/reference/npi\\?`));
    const p1 = await get(t, pathOf(p0.body.next_url), f.tokenA);
    expect(p1.body).toMatchObject({ page: 1, page_size: 3, total_count: 4, next_url: null });
    expect([...p0.body.data.npis, ...p1.body.data.npis]).toHaveLength(4);
    const beyond = await get(t, '/v1/reference/npi?page=9&page_size=3', f.tokenA);
    expect(beyond.body).toMatchObject({ total_count: 4, next_url: null, data: { npis: [] } });
  });

  test('limits: page_size 1..60000, page >= 0, integers', async () => {
    expect((await get(t, '/v1/reference/npi?page_size=60000', f.tokenA)).status).toBe(200);
    expect((await get(t, '/v1/reference/npi?page_size=1', f.tokenA)).status).toBe(200);
    expect400(await get(t, '/v1/reference/npi?page_size=60001', f.tokenA), 'page_size');
    expect400(await get(t, '/v1/reference/npi?page_size=0', f.tokenA), 'page_size');
    expect400(await get(t, '/v1/reference/npi?page=-1', f.tokenA), 'page');
    expect400(await get(t, '/v1/reference/npi?page=abc', f.tokenA), 'page');
    // Unknown parameters are ignored.
    expect((await get(t, '/v1/reference/npi?colour=blue', f.tokenA)).status).toBe(200);
  });

  test('needs a token', async () => {
    const r = await get(t, '/v1/reference/npi');
    expect(r.status).toBe(401);
  });

  // The list reads the NPI copied onto each directory row (migration 0027): it follows an import
  // that gives a provider a new NPI, and back.
  test("follows a provider's new NPI at once", async () => {
    const renumbered = npi('123000042');
    const write = async (a2: string) => {
      const doc = fixtureDocument();
      doc.providers = doc.providers!.map((p) => (p.id === 'pr_a2' ? { ...p, npi: a2 } : p));
      await t.db.transaction().execute((trx) => writeDirectory(trx, t.config.appEnv, doc));
    };
    await write(renumbered);
    try {
      const r = await get(t, '/v1/reference/npi', f.tokenA);
      expect(r.body).toMatchObject({ total_count: 4 });
      expect(r.body.data.npis).toEqual([NPI.a1, renumbered, NPI.b1, NPI.virt].sort());
      expect((await get(t, '/v1/reference/npi', f.tokenB)).body.data.npis).toEqual([NPI.other]);
    } finally {
      await write(NPI.a2);
    }
    expect((await get(t, '/v1/reference/npi', f.tokenA)).body.data.npis).toEqual([NPI.a1, NPI.a2, NPI.b1, NPI.virt].sort());
  });
});

describe('GET /v1/specialties', () => {
  test('lists specialties with the pagination fields and no request_id', async () => {
    const r = await get(t, '/v1/specialties', f.tokenA);
    expect(r.status).toBe(200);
    expect(r.body).not.toHaveProperty('request_id');
    expect(r.body).toMatchObject({ page: 0, page_size: 100, total_count: 2, next_url: null });
    expect(r.body.data).toContainEqual({
      id: 'sp_fam',
      name: 'Family Medicine',
      care_category: 'health',
      default_visit_reason_id: 'pc_fam_1',
      default_visit_reason_name: 'Annual physical',
    });
  });

  test('filters by care_category and pages', async () => {
    const d = await get(t, '/v1/specialties?care_category=dental', f.tokenA);
    expect(d.body.data.map((s: { id: string }) => s.id)).toEqual(['sp_dent']);
    const p0 = await get(t, '/v1/specialties?page_size=1', f.tokenA);
    expect(p0.body.total_count).toBe(2);
    const p1 = await get(t, pathOf(p0.body.next_url), f.tokenA);
    expect(p1.body).toMatchObject({ page: 1, next_url: null });
    expect(p1.body.data).toHaveLength(1);
  });

  test('limits: page <= 200, page_size 1..500, care_category values', async () => {
    expect((await get(t, '/v1/specialties?page=200&page_size=500', f.tokenA)).status).toBe(200);
    expect400(await get(t, '/v1/specialties?page=201', f.tokenA), 'page');
    expect400(await get(t, '/v1/specialties?page_size=501', f.tokenA), 'page_size');
    expect400(await get(t, '/v1/specialties?page_size=0', f.tokenA), 'page_size');
    expect400(await get(t, '/v1/specialties?care_category=mental', f.tokenA), 'care_category');
  });

  test('GET /v1/specialties/{id}', async () => {
    const r = await get(t, '/v1/specialties/sp_dent', f.tokenA);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: 'sp_dent', care_category: 'dental', default_visit_reason_name: 'Dental cleaning' });
    expect(typeof r.body.request_id).toBe('string');
    expect((await get(t, '/v1/specialties/sp_nope', f.tokenA)).status).toBe(404);
    expect400(await get(t, '/v1/specialties/nope', f.tokenA), 'specialty_id');
  });
});

describe('GET /v1/visit_reasons', () => {
  test('lists and filters by specialty', async () => {
    const r = await get(t, '/v1/visit_reasons?specialty_id=sp_fam', f.tokenA);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total_count: 2, next_url: null });
    expect(r.body.data).toEqual([
      { id: 'pc_fam_1', name: 'Annual physical', specialty_id: 'sp_fam' },
      { id: 'pc_fam_2', name: 'Sick visit', specialty_id: 'sp_fam' },
    ]);
    const p0 = await get(t, '/v1/visit_reasons?page_size=2', f.tokenA);
    expect(p0.body.total_count).toBe(3);
    expect((await get(t, pathOf(p0.body.next_url), f.tokenA)).body.data).toHaveLength(1);
  });

  test('limits and single read', async () => {
    expect400(await get(t, '/v1/visit_reasons?page=201', f.tokenA), 'page');
    expect400(await get(t, '/v1/visit_reasons?page_size=501', f.tokenA), 'page_size');
    const one = await get(t, '/v1/visit_reasons/pc_dent_1', f.tokenA);
    expect(one.body.data).toEqual({ id: 'pc_dent_1', name: 'Dental cleaning', specialty_id: 'sp_dent' });
    expect((await get(t, '/v1/visit_reasons/pc_nope', f.tokenA)).status).toBe(404);
    expect400(await get(t, '/v1/visit_reasons/xx', f.tokenA), 'visit_reason_id');
  });
});

describe('GET /v1/insurance_plans', () => {
  const ids = (r: { body: { data: { id: string }[] } }) => r.body.data.map((p) => p.id);

  test('lists active plans by default with carrier, plan_type and network_type', async () => {
    const r = await get(t, '/v1/insurance_plans', f.tokenA);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ page: 0, page_size: 100, total_count: 4, next_url: null });
    expect(ids(r)).not.toContain('ip_old');
    const hmo = r.body.data.find((p: { id: string }) => p.id === 'ip_acme_hmo');
    expect(hmo).toMatchObject({
      name: 'Acme HMO NY',
      carrier: { id: 'ic_acme', name: 'Acme Health' },
      plan_type: 'hmo',
      network_type: 'hmo',
      program_type: 'commercial',
      status: 'active',
      care_categories: ['health'],
      coverage_area: { is_national: false, states: ['NY'] },
    });
    expect(hmo.ref_metadata.created_timestamp_utc).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    const ppo = r.body.data.find((p: { id: string }) => p.id === 'ip_acme_ppo');
    expect(ppo.coverage_area).toEqual({ is_national: true, states: null });
  });

  test('filters: status, state, plan_type, network_type, program_type, care_category', async () => {
    expect(ids(await get(t, '/v1/insurance_plans?status=inactive', f.tokenA))).toEqual(['ip_old']);
    expect(ids(await get(t, '/v1/insurance_plans?state=CA', f.tokenA))).toEqual(['ip_acme_medicare', 'ip_acme_ppo', 'ip_beta_dental']);
    expect(ids(await get(t, '/v1/insurance_plans?plan_type=hmo', f.tokenA))).toEqual(['ip_acme_hmo']);
    expect(ids(await get(t, '/v1/insurance_plans?network_type=ppo', f.tokenA))).toEqual(['ip_acme_ppo', 'ip_beta_dental']);
    expect(ids(await get(t, '/v1/insurance_plans?program_type=medicare', f.tokenA))).toEqual(['ip_acme_medicare']);
    expect(ids(await get(t, '/v1/insurance_plans?care_category=dental', f.tokenA))).toEqual(['ip_beta_dental']);
    expect(ids(await get(t, '/v1/insurance_plans?care_category=vision&state=CA', f.tokenA))).toEqual(['ip_acme_medicare']);
  });

  test('limits and bad values', async () => {
    const p0 = await get(t, '/v1/insurance_plans?page_size=3', f.tokenA);
    expect((await get(t, pathOf(p0.body.next_url), f.tokenA)).body).toMatchObject({ page: 1, next_url: null });
    expect400(await get(t, '/v1/insurance_plans?page_size=0', f.tokenA), 'page_size');
    expect400(await get(t, '/v1/insurance_plans?page_size=1001', f.tokenA), 'page_size');
    expect400(await get(t, '/v1/insurance_plans?status=gone', f.tokenA), 'status');
    expect400(await get(t, '/v1/insurance_plans?state=California', f.tokenA), 'state');
    expect400(await get(t, '/v1/insurance_plans?plan_type=cheap', f.tokenA), 'plan_type');
    expect400(await get(t, '/v1/insurance_plans?program_type=cheap', f.tokenA), 'program_type');
    expect400(await get(t, '/v1/insurance_plans?plan_type=hmo&network_type=ppo', f.tokenA), 'network_type');
  });

  test('GET /v1/insurance_plans/{id}', async () => {
    const r = await get(t, '/v1/insurance_plans/ip_old', f.tokenA);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: 'ip_old', status: 'inactive', plan_type: 'indemnity', network_type: 'indemnity' });
    expect((await get(t, '/v1/insurance_plans/ip_nope', f.tokenA)).status).toBe(404);
    expect400(await get(t, '/v1/insurance_plans/nope', f.tokenA), 'insurance_plan_id');
    expect((await get(t, '/v1/insurance_plans/ip_old')).status).toBe(401);
  });
});
