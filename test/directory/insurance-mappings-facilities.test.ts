/**
 * Insurance mappings (docs/api/directory.md#reference-data, docs/api/directory.md#insurance-mappings) and facilities (beta, docs/api/directory.md#facilities-beta).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.js';
import { clientToken } from '../helpers/auth.js';
import { expect400, get, loadFixture, NPI, npi, pathOf, PL, type DirectoryFixture } from './fixture.js';

let t: TestApp;
let f: DirectoryFixture;
beforeAll(async () => {
  t = await testApp();
  f = await loadFixture(t);
});
afterAll(async () => t?.close());

const enc = encodeURIComponent;
const mappingsUrl = (id: string) => `/v1/provider_locations/${enc(id)}/insurance_mappings`;

async function post(url: string, token: string | undefined, payload: unknown) {
  const r = await t.app.inject({ method: 'POST', url, payload: payload as object, headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: r.statusCode, body: r.body ? JSON.parse(r.body) : undefined };
}

async function mapped(id: string): Promise<string[]> {
  const r = await get(t, mappingsUrl(id), f.tokenA);
  return r.body.data.insurance_plan_mappings.map((m: { insurance_plan_id: string }) => m.insurance_plan_id);
}

async function settled(): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const pending = await t.db.selectFrom('insurance_mapping_requests').select('id').where('status', '=', 'pending').execute();
    if (pending.length === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('insurance mapping requests still pending');
}

describe('GET /v1/provider_locations/{id}/insurance_mappings', () => {
  test('mapped plans and eligible plans grouped by carrier and network', async () => {
    const r = await get(t, mappingsUrl(PL.a1nyc), f.tokenA);
    expect(r.status).toBe(200);
    expect(typeof r.body.request_id).toBe('string');
    expect(r.body.data.insurance_plan_mappings).toEqual([{ insurance_plan_id: 'ip_acme_ppo' }]);
    // A health provider in NY: the national PPO and the NY HMO; not the CA plan, the dental plan or the inactive one.
    expect(r.body.data.eligible_insurances).toEqual([
      {
        insurance_carrier_id: 'ic_acme',
        insurance_carrier_networks: [
          { program_type: 'commercial', network_type: 'hmo', insurance_plan_ids: ['ip_acme_hmo'] },
          { program_type: 'commercial', network_type: 'ppo', insurance_plan_ids: ['ip_acme_ppo'] },
        ],
      },
    ]);
    // Practice-managed: the practice's plans.
    expect(await mapped(PL.b1nyc)).toEqual(['ip_acme_ppo']);
  });

  test('404 outside the directory and for another developer; 400 when malformed', async () => {
    expect((await get(t, mappingsUrl(PL.out), f.tokenA)).status).toBe(404);
    expect((await get(t, mappingsUrl(PL.other), f.tokenA)).status).toBe(404);
    expect((await get(t, mappingsUrl(PL.other), f.tokenB)).status).toBe(200);
    expect400(await get(t, mappingsUrl('nope'), f.tokenA), 'provider_location_id');
    expect((await get(t, mappingsUrl(PL.a1nyc))).status).toBe(401);
  });
});

describe('POST /v1/provider_locations/{id}/insurance_mappings', () => {
  test('202, then applied by the background job: Add, Remove, Replace', async () => {
    const add = await post(mappingsUrl(PL.a1bk), f.tokenA, { insurance_plan_ids: ['ip_acme_hmo', 'ip_acme_ppo'], operation: 'Add' });
    expect(add.status).toBe(202);
    expect(Object.keys(add.body)).toEqual(['request_id']);
    await settled();
    expect(await mapped(PL.a1bk)).toEqual(['ip_acme_hmo', 'ip_acme_ppo']);
    expect((await post(mappingsUrl(PL.a1bk), f.tokenA, { insurance_plan_ids: ['ip_acme_hmo'], operation: 'Remove' })).status).toBe(202);
    await settled();
    expect(await mapped(PL.a1bk)).toEqual(['ip_acme_ppo']);
    expect((await post(mappingsUrl(PL.a1bk), f.tokenA, { insurance_plan_ids: ['ip_acme_medicare'], operation: 'Replace' })).status).toBe(202);
    await settled();
    expect(await mapped(PL.a1bk)).toEqual(['ip_acme_medicare']);
    const rows = await t.db.selectFrom('insurance_mapping_requests').select('status').execute();
    expect(rows.map((r) => r.status)).toEqual(['applied', 'applied', 'applied']);
  });

  test('409 when the practice manages the plans; 404 outside the directory; 400 for bad bodies', async () => {
    const r = await post(mappingsUrl(PL.b1nyc), f.tokenA, { insurance_plan_ids: ['ip_acme_hmo'], operation: 'Add' });
    expect(r.status).toBe(409);
    expect(r.body.error_type).toBe('invalid_request');
    expect((await post(mappingsUrl(PL.out), f.tokenA, { insurance_plan_ids: ['ip_acme_hmo'], operation: 'Add' })).status).toBe(404);
    expect((await post(mappingsUrl(PL.other), f.tokenA, { insurance_plan_ids: ['ip_acme_hmo'], operation: 'Add' })).status).toBe(404);
    expect400(await post(mappingsUrl(PL.a1nyc), f.tokenA, { insurance_plan_ids: ['ip_nope'], operation: 'Add' }), 'insurance_plan_ids');
    expect400(await post(mappingsUrl(PL.a1nyc), f.tokenA, { insurance_plan_ids: ['ip_acme_hmo'], operation: 'Merge' }), 'operation');
    expect400(await post(mappingsUrl(PL.a1nyc), f.tokenA, { operation: 'Add' }), 'insurance_plan_ids');
    expect400(await post(mappingsUrl(PL.a1nyc), f.tokenA, { insurance_plan_ids: [], operation: 'Add' }), 'insurance_plan_ids');
    expect400(await post(mappingsUrl('nope'), f.tokenA, { insurance_plan_ids: ['ip_acme_hmo'], operation: 'Add' }), 'provider_location_id');
  });

  test('needs external.provider_insurance.write', async () => {
    expect((await post(mappingsUrl(PL.a1nyc), undefined, { insurance_plan_ids: ['ip_acme_hmo'], operation: 'Add' })).status).toBe(401);
    const narrow = await clientToken(t, f.devA, 'external.appointment.read');
    expect((await post(mappingsUrl(PL.a1nyc), narrow, { insurance_plan_ids: ['ip_acme_hmo'], operation: 'Add' })).status).toBe(403);
  });
});

describe('GET /v1-beta/facilities', () => {
  const ids = (r: { body: { data: { facility_id: string }[] } }) => r.body.data.map((x) => x.facility_id);

  test('by ZIP: nearest first, in the caller directory only', async () => {
    const r = await get(t, '/v1-beta/facilities?zip_code=10001&max_distance_to_patient_mi=100', f.tokenA);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ page: 0, page_size: 10, total_count: 2, next_url: null });
    expect(ids(r)).toEqual(['fa_nyc', 'fa_phl']);
    expect(r.body.data[0]).toMatchObject({
      facility_id: 'fa_nyc',
      name: 'NYC Clinic',
      npi: NPI.a1,
      building_type: 'clinic',
      specialties: ['Family Medicine'],
      languages: ['English', 'Spanish'],
      visit_reason_ids: ['pc_fam_1', 'pc_fam_2'],
      default_visit_reason_id: 'pc_fam_1',
      location: { address1: '1 Main St', zip_code: '10001', distance_to_patient_mi: 0 },
      schedule: { schedule_id: PL.a1nyc, provider_location_id: PL.a1nyc, booking_requirements: { required_fields: [] } },
      practice: { practice_id: 'pt_a', practice_name: 'Practice A' },
    });
    expect(ids(await get(t, '/v1-beta/facilities?zip_code=10001', f.tokenA))).toEqual(['fa_nyc']);
    expect(ids(await get(t, '/v1-beta/facilities?zip_code=10001', f.tokenB))).toEqual(['fa_other']);
  });

  test('by NPI, and the building type, visit reason and insurance filters', async () => {
    expect(ids(await get(t, `/v1-beta/facilities?npis=${NPI.a2},${NPI.out}`, f.tokenA))).toEqual(['fa_phl']);
    expect(ids(await get(t, '/v1-beta/facilities?zip_code=10001&max_distance_to_patient_mi=100&building_type=hospital', f.tokenA))).toEqual(['fa_phl']);
    expect(ids(await get(t, '/v1-beta/facilities?zip_code=10001&max_distance_to_patient_mi=100&visit_reason_id=pc_dent_1', f.tokenA))).toEqual(['fa_phl']);
    expect(ids(await get(t, '/v1-beta/facilities?zip_code=10001&max_distance_to_patient_mi=100&insurance_plan_id=ip_acme_ppo', f.tokenA))).toEqual(['fa_nyc']);
    const p0 = await get(t, '/v1-beta/facilities?zip_code=10001&max_distance_to_patient_mi=100&page_size=1', f.tokenA);
    expect(ids(p0)).toEqual(['fa_nyc']);
    const p1 = await get(t, pathOf(p0.body.next_url), f.tokenA);
    expect(p1.body).toMatchObject({ page: 1, next_url: null });
    expect(ids(p1)).toEqual(['fa_phl']);
  });

  test('limits and bad parameters', async () => {
    expect400(await get(t, '/v1-beta/facilities', f.tokenA), 'zip_code');
    expect400(await get(t, '/v1-beta/facilities?zip_code=123', f.tokenA), 'zip_code');
    const many = Array.from({ length: 51 }, (_, i) => npi(String(200000000 + i))).join(',');
    expect400(await get(t, `/v1-beta/facilities?npis=${many}`, f.tokenA), 'npis');
    expect400(await get(t, '/v1-beta/facilities?zip_code=10001&building_type=castle', f.tokenA), 'building_type');
    expect400(await get(t, '/v1-beta/facilities?zip_code=10001&page_size=101', f.tokenA), 'page_size');
    expect400(await get(t, '/v1-beta/facilities?zip_code=10001&max_distance_to_patient_mi=-3', f.tokenA), 'max_distance_to_patient_mi');
    expect400(await get(t, '/v1-beta/facilities?zip_code=10001&visit_reason_id=pc_nope', f.tokenA), 'visit_reason_id');
    expect400(await get(t, '/v1-beta/facilities?zip_code=10001&insurance_plan_id=ip_nope', f.tokenA), 'insurance_plan_id');
    expect((await get(t, '/v1-beta/facilities?zip_code=10001')).status).toBe(401);
  });

  test('GET /v1-beta/facilities/{id}', async () => {
    const r = await get(t, '/v1-beta/facilities/fa_phl', f.tokenA);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ facility_id: 'fa_phl', building_type: 'hospital', npi: NPI.a2, location: { city: 'Philadelphia' } });
    expect(r.body.data.location).not.toHaveProperty('distance_to_patient_mi');
    expect((await get(t, '/v1-beta/facilities/fa_out', f.tokenA)).status).toBe(404);
    expect((await get(t, '/v1-beta/facilities/fa_other', f.tokenA)).status).toBe(404);
    expect((await get(t, '/v1-beta/facilities/fa_other', f.tokenB)).status).toBe(200);
    expect((await get(t, '/v1-beta/facilities/fa_none', f.tokenA)).status).toBe(404);
  });
});
