/**
 * A small, hand-made directory for the directory tests, and two developers:
 * - developer A's directory: pr_a1 at lo_nyc (auto schedule every day → "available") and at lo_bk
 *   (one short block a week → "limited"), pr_a2 (dental) at lo_phl (no schedule → "none"), pr_b1 at
 *   lo_nyc2 (practice-managed insurance), pr_virt at a virtual NY location, and pr_gone (inactive);
 * - developer B's directory: pr_other at lo_bk;
 * - in nobody's directory: pr_out at lo_out, a few blocks from lo_nyc.
 */
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import type { DirectoryDocument } from '../../src/domain/directory/document.js';
import { npiCheckDigit } from '../../src/domain/directory/npi.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { afterAll, beforeAll } from 'vitest';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { clientToken } from '../helpers/auth.js';

export const npi = (base9: string): string => base9 + String(npiCheckDigit(base9));

export const NPI = {
  a1: npi('123000001'),
  a2: npi('123000002'),
  b1: npi('123000003'),
  virt: npi('123000004'),
  out: npi('123000005'),
  other: npi('123000006'),
  gone: npi('123000007'),
};

export const PL = {
  a1nyc: 'pr_a1|lo_nyc',
  a1bk: 'pr_a1|lo_bk',
  a2phl: 'pr_a2|lo_phl',
  b1nyc: 'pr_b1|lo_nyc2',
  virt: 'pr_virt|lo_virt_ny',
  gone: 'pr_gone|lo_nyc',
  out: 'pr_out|lo_out',
  other: 'pr_other|lo_bk',
};

const everyDay = [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, start: '09:00', end: '17:00' }));

export function fixtureDocument(): DirectoryDocument {
  const provider = (id: string, n: string, practice: string, spec: 'fam' | 'dent', extra: Record<string, unknown> = {}) => ({
    id,
    npi: n,
    practice_id: practice,
    first_name: `First${id}`,
    last_name: `Last${id}`,
    title: 'MD',
    gender_identity: 'Female',
    statement: 'Statement',
    photo_url: `https://img.example.org/${id}.jpg`,
    languages: ['English', 'Spanish'],
    certifications: ['Board certified'],
    education_institutions: ['Some University'],
    main_specialty_id: `sp_${spec}`,
    specialty_ids: [`sp_${spec}`],
    default_visit_reason_id: spec === 'fam' ? 'pc_fam_1' : 'pc_dent_1',
    visit_reason_ids: spec === 'fam' ? ['pc_fam_1', 'pc_fam_2'] : ['pc_dent_1'],
    ...extra,
  });
  const loc = (id: string, zip: string, city: string, state: string, lat: number, lon: number, tz = 'America/New_York') => ({
    id,
    location_name: `${city} office`,
    address1: '1 Main St',
    city,
    state,
    zip_code: zip,
    latitude: lat,
    longitude: lon,
    time_zone: tz,
    phone_number: '2125550100',
  });
  return {
    specialties: [
      { id: 'sp_fam', name: 'Family Medicine', care_category: 'health', default_visit_reason_id: 'pc_fam_1' },
      { id: 'sp_dent', name: 'General Dentistry', care_category: 'dental', default_visit_reason_id: 'pc_dent_1' },
    ],
    visit_reasons: [
      { id: 'pc_fam_1', name: 'Annual physical', specialty_id: 'sp_fam', duration_minutes: { new: 30, existing: 20 } },
      { id: 'pc_fam_2', name: 'Sick visit', specialty_id: 'sp_fam', duration_minutes: { new: 20, existing: 15 } },
      { id: 'pc_dent_1', name: 'Dental cleaning', specialty_id: 'sp_dent', duration_minutes: { new: 60, existing: 45 } },
    ],
    insurance_carriers: [
      { id: 'ic_acme', name: 'Acme Health' },
      { id: 'ic_beta', name: 'Beta Dental' },
    ],
    insurance_plans: [
      { id: 'ip_acme_ppo', carrier_id: 'ic_acme', name: 'Acme PPO', plan_type: 'ppo', program_type: 'commercial', care_categories: ['health'], coverage_area: { is_national: true, states: null } },
      { id: 'ip_acme_hmo', carrier_id: 'ic_acme', name: 'Acme HMO NY', plan_type: 'hmo', program_type: 'commercial', care_categories: ['health'], coverage_area: { is_national: false, states: ['NY'] } },
      { id: 'ip_acme_medicare', carrier_id: 'ic_acme', name: 'Acme Medicare CA', plan_type: 'medicare', program_type: 'medicare', care_categories: ['health', 'vision'], coverage_area: { is_national: false, states: ['CA'] } },
      { id: 'ip_beta_dental', carrier_id: 'ic_beta', name: 'Beta Dental PPO', plan_type: 'ppo', program_type: 'commercial', care_categories: ['dental'], coverage_area: { is_national: true, states: null } },
      { id: 'ip_old', carrier_id: 'ic_acme', name: 'Acme Old', plan_type: 'indemnity', program_type: 'commercial', status: 'inactive', care_categories: ['health'], coverage_area: { is_national: true, states: null } },
    ],
    practices: [
      { id: 'pt_a', name: 'Practice A' },
      { id: 'pt_b', name: 'Practice B', insurance_managed_at_practice: true, insurance_plan_ids: ['ip_acme_ppo'] },
    ],
    providers: [
      provider('pr_a1', NPI.a1, 'pt_a', 'fam'),
      provider('pr_a2', NPI.a2, 'pt_a', 'dent'),
      provider('pr_b1', NPI.b1, 'pt_b', 'fam'),
      provider('pr_virt', NPI.virt, 'pt_a', 'fam'),
      provider('pr_out', NPI.out, 'pt_a', 'fam'),
      provider('pr_other', NPI.other, 'pt_a', 'fam'),
      provider('pr_gone', NPI.gone, 'pt_a', 'fam'),
    ],
    locations: [
      loc('lo_nyc', '10001', 'New York', 'NY', 40.7484, -73.9967),
      loc('lo_nyc2', '10001', 'New York', 'NY', 40.75, -73.99),
      loc('lo_bk', '11201', 'Brooklyn', 'NY', 40.6939, -73.9897),
      loc('lo_phl', '19103', 'Philadelphia', 'PA', 39.9529, -75.1741),
      loc('lo_out', '10001', 'New York', 'NY', 40.749, -73.997),
      { id: 'lo_virt_ny', is_virtual: true, location_name: 'Virtual NY', state: 'NY', time_zone: 'America/New_York' },
    ],
    provider_locations: [
      { provider_id: 'pr_a1', location_id: 'lo_nyc', insurance_plan_ids: ['ip_acme_ppo'], weekly_schedule: everyDay },
      { provider_id: 'pr_a1', location_id: 'lo_bk', confirmation_type: 'manual', required_fields: ['patient.insurance'], weekly_schedule: [{ weekday: 3, start: '09:00', end: '10:00' }] },
      { provider_id: 'pr_a2', location_id: 'lo_phl', insurance_plan_ids: ['ip_beta_dental'] },
      { provider_id: 'pr_b1', location_id: 'lo_nyc2', weekly_schedule: everyDay },
      { provider_id: 'pr_virt', location_id: 'lo_virt_ny', provider_location_type: 'virtual_provider', weekly_schedule: everyDay },
      { provider_id: 'pr_gone', location_id: 'lo_nyc', active: false },
      { provider_id: 'pr_out', location_id: 'lo_out', insurance_plan_ids: ['ip_acme_ppo'], weekly_schedule: everyDay },
      { provider_id: 'pr_other', location_id: 'lo_bk', insurance_plan_ids: ['ip_acme_ppo'], weekly_schedule: everyDay },
    ],
    facilities: [
      { id: 'fa_nyc', name: 'NYC Clinic', building_type: 'clinic', provider_location_id: PL.a1nyc },
      { id: 'fa_phl', name: 'Philly Hospital', npi: NPI.a2, building_type: 'hospital', provider_location_id: PL.a2phl },
      { id: 'fa_out', name: 'Outside Clinic', building_type: 'clinic', provider_location_id: PL.out },
      { id: 'fa_other', name: 'Other Clinic', building_type: 'clinic', provider_location_id: PL.other },
    ],
  };
}

export interface DirectoryFixture {
  devA: NewDeveloper;
  devB: NewDeveloper;
  /** A token of developer A with every client scope. */
  tokenA: string;
  tokenB: string;
}

/** Writes the fixture and two developers' directories; returns their credentials and tokens. */
export async function loadFixture(t: TestApp): Promise<DirectoryFixture> {
  const devA = await newDeveloper(t, 'Developer A');
  const devB = await newDeveloper(t, 'Developer B');
  const doc = fixtureDocument();
  const env = t.config.appEnv;
  await t.db.transaction().execute(async (trx) => {
    await writeDirectory(trx, env, doc);
    const rows = [
      ...[PL.a1nyc, PL.a1bk, PL.a2phl, PL.b1nyc, PL.virt, PL.gone].map((id) => ({ env, developer_id: devA.developer_id, provider_location_id: id })),
      { env, developer_id: devB.developer_id, provider_location_id: PL.other },
    ];
    await trx.insertInto('developer_provider_locations').values(rows).execute();
  });
  return { devA, devB, tokenA: await clientToken(t, devA), tokenB: await clientToken(t, devB) };
}

/**
 * A test file's app with the fixture loaded: registers `beforeAll` (a new test app, `loadFixture`)
 * and `afterAll` (closes it); the returned object holds both once the file's tests run.
 */
export function useDirectoryFixture(): { readonly t: TestApp; readonly f: DirectoryFixture } {
  const ctx = {} as { t: TestApp; f: DirectoryFixture };
  beforeAll(async () => {
    ctx.t = await testApp();
    ctx.f = await loadFixture(ctx.t);
  });
  afterAll(async () => ctx.t?.close());
  return ctx;
}

/** GET `url` with a bearer token (or none); returns status and parsed body. */
export async function get(t: TestApp, url: string, token?: string): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = await t.app.inject({ method: 'GET', url, headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: r.statusCode, body: r.body ? JSON.parse(r.body) : undefined };
}

/** The path and query of a `next_url`, for following it with `inject`. */
export function pathOf(nextUrl: string): string {
  const u = new URL(nextUrl);
  return u.pathname + u.search;
}

/** Asserts a 400 error body naming `field`. */
export function expect400(res: { status: number; body: any }, field: string): void { // eslint-disable-line @typescript-eslint/no-explicit-any
  if (res.status !== 400) throw new Error(`expected 400 naming ${field}, got ${res.status} ${JSON.stringify(res.body)}`);
  const fields = (res.body.errors as { field?: string }[]).map((e) => e.field);
  if (!fields.includes(field)) throw new Error(`expected an error naming ${field}, got ${JSON.stringify(res.body.errors)}`);
  if (res.body.error_type !== 'invalid_request' || typeof res.body.request_id !== 'string') throw new Error(`not an error body: ${JSON.stringify(res.body)}`);
}
