/** GET /v1/providers (docs/api/directory.md#providers-by-npi) and provider-location search and read (docs/api/directory.md#provider-location-search). */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { directoryAvailability } from '../../src/domain/availability/directory-availability.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { expect400, get, loadFixture, NPI, npi, pathOf, PL, type DirectoryFixture } from './fixture.js';

let t: TestApp;
let f: DirectoryFixture;
beforeAll(async () => {
  t = await testApp();
  f = await loadFixture(t);
});
afterAll(async () => t?.close());

describe('GET /v1/providers', () => {
  test('one element per requested NPI with the provider, its locations and virtual locations', async () => {
    const r = await get(t, `/v1/providers?npis=${NPI.a1},${NPI.virt}`, f.tokenA);
    expect(r.status).toBe(200);
    expect(typeof r.body.request_id).toBe('string');
    expect(r.body.data.map((d: { npi: string }) => d.npi)).toEqual([NPI.a1, NPI.virt]);
    const [a1] = r.body.data[0].providers;
    expect(a1).toMatchObject({
      provider_id: 'pr_a1',
      npi: NPI.a1,
      first_name: 'Firstpr_a1',
      last_name: 'Lastpr_a1',
      title: 'MD',
      full_name: 'Firstpr_a1 Lastpr_a1, MD',
      gender_identity: 'Female',
      specialties: ['Family Medicine'],
      specialty_ids: ['sp_fam'],
      default_visit_reason_id: 'pc_fam_1',
      visit_reason_ids: ['pc_fam_1', 'pc_fam_2'],
      statement: 'Statement',
      provider_photo_url: 'https://img.example.org/pr_a1.jpg',
      languages: ['English', 'Spanish'],
      credentials: { certifications: ['Board certified'], education: { institutions: ['Some University'] } },
      practice: { practice_id: 'pt_a', practice_name: 'Practice A' },
      virtual_locations: [],
    });
    expect(a1.locations.map((l: { provider_location_id: string }) => l.provider_location_id)).toEqual([PL.a1bk, PL.a1nyc]);
    const nyc = a1.locations.find((l: { provider_location_id: string }) => l.provider_location_id === PL.a1nyc);
    expect(nyc).toMatchObject({
      accepts_patient_insurance: 'insurance_not_specified',
      booking_requirements: { required_fields: [], accepts_booking_requests_from: ['in_network', 'out_of_network', 'self_pay'] },
      address1: '1 Main St',
      city: 'New York',
      state: 'NY',
      zip_code: '10001',
      latitude: 40.7484,
      longitude: -73.9967,
      location_name: 'New York office',
    });
    expect(nyc.first_availability_date_in_provider_local_time).toMatch(/^\d{4}-\d\d-\d\d$/);
    const bk = a1.locations.find((l: { provider_location_id: string }) => l.provider_location_id === PL.a1bk);
    expect(bk.booking_requirements.required_fields).toEqual(['patient.insurance']);
    const virt = r.body.data[1].providers[0];
    expect(virt.locations).toEqual([]);
    expect(virt.virtual_locations).toEqual([
      expect.objectContaining({ provider_location_id: PL.virt, state: 'NY', time_zone: 'America/New_York', location_name: 'Virtual NY' }),
    ]);
  });

  test('insurance_plan_id drives accepts_patient_insurance (practice-managed plans included)', async () => {
    const r = await get(t, `/v1/providers?npis=${NPI.a1},${NPI.b1}&insurance_plan_id=ip_acme_ppo`, f.tokenA);
    const locs = Object.fromEntries(
      r.body.data.flatMap((d: { providers: { locations: { provider_location_id: string; accepts_patient_insurance: string }[] }[] }) =>
        d.providers.flatMap((p) => p.locations.map((l) => [l.provider_location_id, l.accepts_patient_insurance])),
      ),
    );
    expect(locs).toEqual({ [PL.a1nyc]: 'accepted', [PL.a1bk]: 'not_accepted', [PL.b1nyc]: 'accepted' });
    const hmo = await get(t, `/v1/providers?npis=${NPI.b1}&insurance_plan_id=ip_acme_hmo`, f.tokenA);
    expect(hmo.body.data[0].providers[0].locations[0].accepts_patient_insurance).toBe('not_accepted');
  });

  test('providers outside the directory, inactive, or in another developer directory are not returned', async () => {
    const r = await get(t, `/v1/providers?npis=${NPI.out},${NPI.other},${NPI.gone}`, f.tokenA);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual([
      { npi: NPI.out, providers: [] },
      { npi: NPI.other, providers: [] },
      { npi: NPI.gone, providers: [] },
    ]);
    const b = await get(t, `/v1/providers?npis=${NPI.other},${NPI.a1}`, f.tokenB);
    expect(b.body.data[0].providers.map((p: { provider_id: string }) => p.provider_id)).toEqual(['pr_other']);
    expect(b.body.data[1].providers).toEqual([]);
  });

  test('limits: npis required, at most 50, ten digits; insurance plan must exist', async () => {
    expect400(await get(t, '/v1/providers', f.tokenA), 'npis');
    expect400(await get(t, '/v1/providers?npis=', f.tokenA), 'npis');
    expect400(await get(t, '/v1/providers?npis=12345', f.tokenA), 'npis');
    const fifty = Array.from({ length: 50 }, (_, i) => npi(String(200000000 + i)));
    expect((await get(t, `/v1/providers?npis=${fifty.join(',')}`, f.tokenA)).status).toBe(200);
    const fiftyOne = [...fifty, npi('300000000')];
    expect400(await get(t, `/v1/providers?npis=${fiftyOne.join(',')}`, f.tokenA), 'npis');
    expect400(await get(t, `/v1/providers?npis=${NPI.a1}&insurance_plan_id=ip_nope`, f.tokenA), 'insurance_plan_id');
    expect((await get(t, `/v1/providers?npis=${NPI.a1}`)).status).toBe(401);
  });
});

describe('GET /v1/provider_locations (search)', () => {
  const ids = (r: { body: { data: { provider_locations: { provider_location_id: string }[] } } }) =>
    r.body.data.provider_locations.map((p) => p.provider_location_id);

  test('nearest first, within the distance, only from the caller directory', async () => {
    const r = await get(t, '/v1/provider_locations?zip_code=10001&specialty_id=sp_fam', f.tokenA);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      page: 0,
      page_size: 10,
      total_count: 3,
      next_url: null,
      data: { search_parameters: { specialty_id: 'sp_fam', visit_reason_id: 'pc_fam_1' } },
    });
    // lo_nyc is at the ZIP centroid, lo_nyc2 a few hundred metres away, lo_bk ~4 miles; pr_out (a few metres
    // away) is in nobody's directory, pr_other only in B's, pr_gone is inactive, pr_virt is virtual.
    expect(ids(r)).toEqual([PL.a1nyc, PL.b1nyc, PL.a1bk]);
    const d = r.body.data.provider_locations.map((p: { location: { distance_to_patient_mi: number } }) => p.location.distance_to_patient_mi);
    expect(d[0]).toBe(0);
    expect(d[2]).toBeGreaterThan(3);
    expect(d[2]).toBeLessThan(5);
    const first = r.body.data.provider_locations[0];
    expect(first).toMatchObject({
      provider_location_type: 'in_person_provider',
      accepts_patient_insurance: 'insurance_not_specified',
      provider: { provider_id: 'pr_a1', npi: NPI.a1, profile_url: expect.stringContaining(NPI.a1) },
      location: { zip_code: '10001', time_zone: 'America/New_York', phone_number: '2125550100' },
      practice: { practice_id: 'pt_a', practice_name: 'Practice A' },
      booking_requirements: { required_fields: [] },
    });
    expect(first).not.toHaveProperty('virtual_location');
  });

  test('distance, visit reason, insurance and visit type filters', async () => {
    expect(ids(await get(t, '/v1/provider_locations?zip_code=10001&specialty_id=sp_fam&max_distance_to_patient_mi=2', f.tokenA))).toEqual([PL.a1nyc, PL.b1nyc]);
    expect(ids(await get(t, '/v1/provider_locations?zip_code=10001&specialty_id=sp_dent', f.tokenA))).toEqual([]);
    expect(ids(await get(t, '/v1/provider_locations?zip_code=10001&specialty_id=sp_dent&max_distance_to_patient_mi=100', f.tokenA))).toEqual([PL.a2phl]);
    const vr = await get(t, '/v1/provider_locations?zip_code=10001&visit_reason_id=pc_fam_2', f.tokenA);
    expect(vr.body.data.search_parameters).toEqual({ specialty_id: 'sp_fam', visit_reason_id: 'pc_fam_2' });
    expect(ids(vr)).toEqual([PL.a1nyc, PL.b1nyc, PL.a1bk]);
    const ins = await get(t, '/v1/provider_locations?zip_code=10001&specialty_id=sp_fam&insurance_plan_id=ip_acme_ppo', f.tokenA);
    expect(ids(ins)).toEqual([PL.a1nyc, PL.b1nyc]);
    expect(ins.body.data.provider_locations.map((p: { accepts_patient_insurance: string }) => p.accepts_patient_insurance)).toEqual(['accepted', 'accepted']);
    const video = await get(t, '/v1/provider_locations?zip_code=10001&specialty_id=sp_fam&visit_type=video_visit', f.tokenA);
    expect(ids(video)).toEqual([PL.virt]);
    expect(video.body.data.provider_locations[0]).toMatchObject({
      provider_location_type: 'virtual_provider',
      virtual_location: { state: 'NY', time_zone: 'America/New_York', location_name: 'Virtual NY' },
    });
    expect(video.body.data.provider_locations[0]).not.toHaveProperty('location');
    // A ZIP in another state has no NY virtual providers.
    expect(ids(await get(t, '/v1/provider_locations?zip_code=19103&specialty_id=sp_fam&visit_type=video_visit', f.tokenA))).toEqual([]);
    expect(ids(await get(t, '/v1/provider_locations?zip_code=10001&specialty_id=sp_fam&visit_type=all', f.tokenA))).toEqual([
      PL.a1nyc, PL.b1nyc, PL.a1bk, PL.virt,
    ]);
  });

  test('another developer sees its own directory only', async () => {
    expect(ids(await get(t, '/v1/provider_locations?zip_code=10001&specialty_id=sp_fam', f.tokenB))).toEqual([PL.other]);
  });

  test('pages with a working next_url', async () => {
    const p0 = await get(t, '/v1/provider_locations?zip_code=10001&specialty_id=sp_fam&page_size=2', f.tokenA);
    expect(p0.body).toMatchObject({ total_count: 3, page_size: 2 });
    expect(ids(p0)).toEqual([PL.a1nyc, PL.b1nyc]);
    const p1 = await get(t, pathOf(p0.body.next_url), f.tokenA);
    expect(p1.body).toMatchObject({ page: 1, next_url: null, total_count: 3 });
    expect(ids(p1)).toEqual([PL.a1bk]);
  });

  test('limits and bad parameters name the parameter', async () => {
    const q = '/v1/provider_locations?specialty_id=sp_fam&zip_code=10001';
    expect400(await get(t, '/v1/provider_locations?specialty_id=sp_fam', f.tokenA), 'zip_code');
    expect400(await get(t, '/v1/provider_locations?specialty_id=sp_fam&zip_code=1000', f.tokenA), 'zip_code');
    expect400(await get(t, '/v1/provider_locations?specialty_id=sp_fam&zip_code=00000', f.tokenA), 'zip_code');
    expect400(await get(t, '/v1/provider_locations?zip_code=10001', f.tokenA), 'specialty_id');
    expect400(await get(t, `${q}&visit_reason_id=pc_dent_1`, f.tokenA), 'visit_reason_id');
    expect400(await get(t, '/v1/provider_locations?zip_code=10001&specialty_id=sp_nope', f.tokenA), 'specialty_id');
    expect400(await get(t, '/v1/provider_locations?zip_code=10001&visit_reason_id=pc_nope', f.tokenA), 'visit_reason_id');
    expect400(await get(t, `${q}&insurance_plan_id=ip_nope`, f.tokenA), 'insurance_plan_id');
    expect400(await get(t, `${q}&visit_type=teleport`, f.tokenA), 'visit_type');
    expect400(await get(t, `${q}&max_distance_to_patient_mi=0`, f.tokenA), 'max_distance_to_patient_mi');
    expect400(await get(t, `${q}&max_distance_to_patient_mi=501`, f.tokenA), 'max_distance_to_patient_mi');
    expect400(await get(t, `${q}&max_distance_to_patient_mi=far`, f.tokenA), 'max_distance_to_patient_mi');
    expect400(await get(t, `${q}&page_size=101`, f.tokenA), 'page_size');
    expect400(await get(t, `${q}&page_size=0`, f.tokenA), 'page_size');
    expect400(await get(t, `${q}&page=-1`, f.tokenA), 'page');
    expect((await get(t, `${q}&page_size=100`, f.tokenA)).status).toBe(200);
    expect((await get(t, q)).status).toBe(401);
  });
});

describe('GET /v1/provider_locations/{id}', () => {
  const enc = encodeURIComponent;

  test('reads one provider-location of the directory', async () => {
    const r = await get(t, `/v1/provider_locations/${enc(PL.a1nyc)}?insurance_plan_id=ip_acme_ppo`, f.tokenA);
    expect(r.status).toBe(200);
    expect(typeof r.body.request_id).toBe('string');
    expect(r.body.data).toMatchObject({
      provider_location_id: PL.a1nyc,
      accepts_patient_insurance: 'accepted',
      provider: { provider_id: 'pr_a1' },
      location: { address1: '1 Main St', latitude: 40.7484 },
    });
    expect(r.body.data.location).not.toHaveProperty('distance_to_patient_mi');
    const raw = await get(t, `/v1/provider_locations/${PL.virt}`, f.tokenA);
    expect(raw.body.data.virtual_location).toMatchObject({ state: 'NY' });
  });

  test('the first availability date is computed from current data on every read', async () => {
    const env = t.config.appEnv;
    const firstDate = async (id: string) => (await get(t, `/v1/provider_locations/${enc(id)}`, f.tokenA)).body.data.first_availability_date_in_provider_local_time as string | undefined;
    const computed = async (id: string) =>
      (await directoryAvailability(t.db, { env, providerLocationIds: [id] })).get(id)?.first_availability_date_in_provider_local_time;
    // Repeated reads of several provider-locations: with the application's shared local-time
    // conversions each gives the date computed from scratch.
    for (const id of [PL.a1nyc, PL.a2phl, PL.virt, PL.a1nyc, PL.virt]) expect(await firstDate(id)).toBe(await computed(id));
    const before = await firstDate(PL.a1nyc);
    expect(before).toMatch(/^\d{4}-\d\d-\d\d$/);
    // A whole day off on that date moves it at once (no memoised summary), and back when removed.
    await t.db.insertInto('time_off').values({ id: 'to_single_read', env, practice_id: 'pt_a', provider_id: 'pr_a1', provider_location_id: PL.a1nyc, start_date: before!, end_date: before! }).execute();
    try {
      const during = await firstDate(PL.a1nyc);
      expect(during).not.toBe(before);
      expect(during! > before!).toBe(true);
      expect(during).toBe(await computed(PL.a1nyc));
    } finally {
      await t.db.deleteFrom('time_off').where('id', '=', 'to_single_read').execute();
    }
    expect(await firstDate(PL.a1nyc)).toBe(before);
  });

  test('404 outside the directory, for another developer, and when inactive; 400 when malformed', async () => {
    expect((await get(t, `/v1/provider_locations/${enc(PL.out)}`, f.tokenA)).status).toBe(404);
    expect((await get(t, `/v1/provider_locations/${enc(PL.other)}`, f.tokenA)).status).toBe(404);
    expect((await get(t, `/v1/provider_locations/${enc(PL.other)}`, f.tokenB)).status).toBe(200);
    expect((await get(t, `/v1/provider_locations/${enc(PL.gone)}`, f.tokenA)).status).toBe(404);
    expect400(await get(t, '/v1/provider_locations/garbage', f.tokenA), 'provider_location_id');
    expect400(await get(t, `/v1/provider_locations/${enc(PL.a1nyc)}?insurance_plan_id=ip_nope`, f.tokenA), 'insurance_plan_id');
  });
});
