/** GET /v1/appointments never returns more than 1,000 appointments through pagination (docs/api/appointments.md#list-appointments, docs/api/conventions.md#limits). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { PL, schedulingEnv, type SchedulingEnv } from './fixtures.js';
import { scaled } from '../helpers/scale.js';

const STORED = 1_050;

describe(`appointment list cap (${engineName})`, () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv();
    // More appointments than pagination may reach, written directly (booking 1,050 over HTTP would
    // test booking, not the cap). Holds are not needed: listing reads appointments only.
    const env = 'sandbox' as const;
    const developerId = e.dev.developer_id;
    const [providerId, locationId] = PL.ny.split('|') as [string, string];
    for (let from = 0; from < STORED; from += 350) {
      const n = Array.from({ length: Math.min(350, STORED - from) }, (_, i) => from + i);
      await e.t.db.insertInto('patients').values(n.map((i) => ({
        id: `pa_cap_${i}`, env, developer_id: developerId, first_name: 'Cap', last_name: `P${i}`, date_of_birth: '1990-01-01',
        sex_at_birth: 'female' as const, phone_number: '2125550100', email_address: 'cap@example.org', address: JSON.stringify({}),
        insurance: null, gender: null, created_by_user_id: null, developer_patient_id: `cap-${i}`,
      }))).execute();
      await e.t.db.insertInto('appointments').values(n.map((i) => {
        const start = new Date(Date.UTC(2031, 0, 1) + i * 3_600_000);
        return {
          id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, env, developer_id: developerId, booked_by_client_id: e.dev.client_id,
          booked_by_user_id: null, patient_id: `pa_cap_${i}`, developer_patient_id: `cap-${i}`, provider_location_id: PL.ny,
          provider_id: providerId, location_id: locationId, practice_id: null, visit_reason_id: 'pc_t30', patient_type: 'new' as const,
          start_time: start.toISOString(), end_time: new Date(start.getTime() + 1_800_000).toISOString(), time_zone: 'America/New_York',
          pending_start_time: null, pending_end_time: null, appointment_status: 'confirmed' as const, confirmation_type: 'auto' as const,
          visit_type: 'in_person' as const, notes: null, cancellation_reason: null, cancellation_reason_type: null, arrived_at: null, evaluate_after: null,
        };
      })).execute();
    }
  }, scaled(120_000));
  afterAll(async () => e.close());

  const list = (qs: string) => e.t.app.inject({ url: `/v1/appointments?${qs}`, headers: bearer(e.token) });

  it('follows next_url to exactly 1,000 distinct appointments, then stops; total_count tells how many match', async () => {
    const seen = new Set<string>();
    let url: string | null = `/v1/appointments?page_size=100&sort_by=start_time_utc&sort_direction=ascending`;
    let pages = 0;
    while (url) {
      const res: { statusCode: number; body: string; json: () => { total_count: number; next_url: string | null; data: { appointment_id: string }[] } } =
        await e.t.app.inject({ url, headers: bearer(e.token) });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.total_count).toBe(STORED);
      for (const a of body.data) seen.add(a.appointment_id);
      url = body.next_url ? new URL(body.next_url).pathname + new URL(body.next_url).search : null;
      pages++;
      expect(pages).toBeLessThanOrEqual(11);
    }
    expect(seen.size).toBe(1_000);
    expect(pages).toBe(10);
  });

  it('page 10 with pages of 100 is empty; smaller pages stop at the same 1,000th appointment', async () => {
    const last = (await list('page=10&page_size=100')).json();
    expect(last.data).toEqual([]);
    expect(last.next_url).toBeNull();
    // Pages of 99: page 10 holds appointments 991–1,000 only (not 991–1,089).
    const tail = (await list('page=10&page_size=99&sort_by=start_time_utc&sort_direction=ascending')).json();
    expect(tail.data).toHaveLength(10);
    expect(tail.next_url).toBeNull();
    expect(tail.data.at(-1).developer_patient_id).toBe('cap-999');
  });
});
