/**
 * A small scheduling directory for tests: providers in New York (DST), Phoenix (no DST) and Honolulu
 * (no DST), auto and manual confirmation, with weekly schedules covering the small hours (so DST
 * transitions fall inside a block) and the working day. Plus the sandbox fixtures.
 */
import { DateTime } from 'luxon';
import type { DirectoryDocument } from '../../src/domain/directory/document.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { ensureSandboxFixtures } from '../../src/domain/directory/sandbox-fixtures.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';

export const PL = {
  ny: 'pr_ny|lo_ny',
  ny2: 'pr_ny2|lo_ny',
  phx: 'pr_phx|lo_phx',
  hnl: 'pr_hnl|lo_hnl',
  manual: 'pr_man|lo_ny',
  nyElsewhere: 'pr_ny|lo_ny_b',
} as const;

const everyDay = [1, 2, 3, 4, 5, 6, 7].flatMap((weekday) => [
  { weekday, start: '00:00', end: '06:00' },
  { weekday, start: '08:00', end: '18:00' },
]);

export function schedulingDirectory(): DirectoryDocument {
  const loc = (id: string, state: string, zone: string, zip: string, lat: number, lon: number) => ({
    id, location_name: `Clinic ${id}`, address1: '1 Main St', city: 'City', state, zip_code: zip, latitude: lat, longitude: lon,
    time_zone: zone, phone_number: '2125550100',
  });
  const prov = (id: string) => ({
    id, npi: '1234567893', practice_id: 'pt_t', first_name: 'Test', last_name: id, main_specialty_id: 'sp_t',
    specialty_ids: ['sp_t'], default_visit_reason_id: 'pc_t30', visit_reason_ids: ['pc_t30', 'pc_t60'],
  });
  return {
    specialties: [{ id: 'sp_t', name: 'Test', care_category: 'health', default_visit_reason_id: 'pc_t30' }],
    visit_reasons: [
      { id: 'pc_t30', name: 'Thirty', specialty_id: 'sp_t', duration_minutes: { new: 30, existing: 20 } },
      { id: 'pc_t60', name: 'Sixty', specialty_id: 'sp_t', duration_minutes: { new: 60, existing: 40 } },
      { id: 'pc_other', name: 'Other', specialty_id: 'sp_t', duration_minutes: { new: 30, existing: 30 } },
    ],
    insurance_carriers: [{ id: 'ic_t', name: 'Carrier' }],
    insurance_plans: [
      { id: 'ip_t', carrier_id: 'ic_t', name: 'Plan', plan_type: 'ppo', program_type: 'commercial', care_categories: ['health'], coverage_area: { is_national: true, states: null } },
      { id: 'ip_u', carrier_id: 'ic_t', name: 'Plan U', plan_type: 'hmo', program_type: 'commercial', care_categories: ['health'], coverage_area: { is_national: true, states: null } },
    ],
    practices: [{ id: 'pt_t', name: 'Test practice' }],
    providers: ['pr_ny', 'pr_ny2', 'pr_phx', 'pr_hnl', 'pr_man'].map(prov),
    locations: [
      loc('lo_ny', 'NY', 'America/New_York', '10001', 40.75, -73.99),
      loc('lo_ny_b', 'NY', 'America/New_York', '10002', 40.71, -73.98),
      loc('lo_phx', 'AZ', 'America/Phoenix', '85001', 33.45, -112.07),
      loc('lo_hnl', 'HI', 'Pacific/Honolulu', '96813', 21.3, -157.85),
    ],
    provider_locations: [
      { provider_id: 'pr_ny', location_id: 'lo_ny', weekly_schedule: everyDay, insurance_plan_ids: ['ip_t'] },
      { provider_id: 'pr_ny', location_id: 'lo_ny_b', weekly_schedule: everyDay },
      { provider_id: 'pr_ny2', location_id: 'lo_ny', weekly_schedule: everyDay },
      { provider_id: 'pr_phx', location_id: 'lo_phx', weekly_schedule: everyDay },
      { provider_id: 'pr_hnl', location_id: 'lo_hnl', weekly_schedule: everyDay, visit_type: 'platform_video_service' },
      { provider_id: 'pr_man', location_id: 'lo_ny', weekly_schedule: everyDay, confirmation_type: 'manual' },
    ],
  };
}

export function patient(over: Record<string, unknown> = {}) {
  return {
    developer_patient_id: 'dp-1',
    first_name: 'Ada',
    last_name: 'Lovelace',
    date_of_birth: '1990-05-17',
    sex_at_birth: 'female',
    phone_number: '2125550123',
    email_address: 'ada@example.org',
    patient_address: { address1: '1 Main St', city: 'New York', state: 'NY', zip_code: '10001' },
    ...over,
  };
}

export interface SchedulingEnv {
  t: TestApp;
  dev: NewDeveloper;
  token: string;
  /** A second developer (sees nothing of the first's appointments). */
  other: NewDeveloper;
  otherToken: string;
  close(): Promise<void>;
}

export async function schedulingEnv(appOpts: Parameters<typeof testApp>[1] = {}): Promise<SchedulingEnv> {
  const t = await testApp({}, appOpts);
  const dev = await newDeveloper(t, 'Scheduling dev');
  const other = await newDeveloper(t, 'Other dev');
  await t.db.transaction().execute(async (trx) => {
    await writeDirectory(trx, 'sandbox', schedulingDirectory(), { developerId: dev.developer_id });
    await writeDirectory(trx, 'sandbox', { provider_locations: [] }, {});
    await ensureSandboxFixtures(trx);
  });
  await t.db
    .insertInto('developer_provider_locations')
    .values({ env: 'sandbox', developer_id: other.developer_id, provider_location_id: PL.ny })
    .execute();
  return {
    t,
    dev,
    token: await clientToken(t, dev),
    other,
    otherToken: await clientToken(t, other),
    close: () => t.close(),
  };
}

/** Bookable slots of one provider-location via the HTTP availability endpoint. */
export async function slots(
  e: { t: TestApp; token: string },
  pl: string,
  opts: { visitReasonId?: string; patientType?: 'new' | 'existing'; start?: string; end?: string } = {},
): Promise<{ start_time: string; visit_reason_id: string }[]> {
  const q = new URLSearchParams({
    provider_location_ids: pl,
    visit_reason_id: opts.visitReasonId ?? 'pc_t30',
    patient_type: opts.patientType ?? 'new',
    ...(opts.start ? { start_date_in_provider_local_time: opts.start } : {}),
    ...(opts.end ? { end_date_in_provider_local_time: opts.end } : {}),
  });
  const res = await e.t.app.inject({ url: `/v1/provider_locations/availability?${q}`, headers: bearer(e.token) });
  if (res.statusCode !== 200) throw new Error(`availability ${res.statusCode} ${res.body}`);
  return res.json().data[0].timeslots;
}

/** A future local date `days` ahead in New York. */
export function nyDate(days: number): string {
  return DateTime.now().setZone('America/New_York').plus({ days }).toISODate()!;
}

export function createBody(pl: string, startTime: string, over: Record<string, unknown> = {}, patientOver: Record<string, unknown> = {}) {
  return {
    appointment_type: 'providers',
    data: { start_time: startTime, visit_reason_id: 'pc_t30', provider_location_id: pl, patient_type: 'new', patient: patient(patientOver), ...over },
  };
}

export async function book(e: { t: TestApp; token: string }, pl: string, startTime: string, over: Record<string, unknown> = {}) {
  return e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(e.token), payload: createBody(pl, startTime, over) });
}

/**
 * Books the first slot in five days at each provider-location (with its overrides), then cancels the
 * `cancelIndex`-th booking with a reason: records with and without their nullable columns set.
 * Returns the appointment ids in order.
 */
export async function bookVariedRecords(e: SchedulingEnv, bookings: readonly (readonly [string, Record<string, unknown>])[], cancelIndex: number): Promise<string[]> {
  const ids: string[] = [];
  for (const [pl, over] of bookings) {
    const day = await slots(e, pl, { start: nyDate(5), end: nyDate(5) });
    const res = await book(e, pl, day[0]!.start_time, over);
    if (res.statusCode !== 200) throw new Error(`booking at ${pl}: ${res.statusCode} ${res.body}`);
    ids.push(res.json().data.appointment_id);
  }
  const cancel = await e.t.app.inject({
    method: 'POST', url: '/v1/appointments/cancel', headers: bearer(e.token),
    payload: { appointment_id: ids[cancelIndex], cancellation_reason_type: 'other_patient_reason', cancellation_reason: 'Moved away' },
  });
  if (cancel.statusCode !== 200) throw new Error(`cancel: ${cancel.statusCode} ${cancel.body}`);
  return ids;
}
