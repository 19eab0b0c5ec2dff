/**
 * Kept schedule data (docs/scheduling.md, "Kept schedule data") never offers a stale slot: each kind
 * of schedule change is seen by the very next availability request after one that kept the data,
 * through the real endpoints: weekly hours, time off and a visit reason override through the
 * Practice API, an operator's `TRUNCATE time_off`, a directory import through the admin API, a calendar push through `/v1`, a
 * booking's held time, and an insurance plan mapped (the insurance filter's answers are kept too).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { book, nyDate, PL, slots, type SchedulingEnv } from '../appointments/fixtures.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { PRACTICE_A, practiceEnv, practiceMember, type PracticeLogin } from '../helpers/practice.js';
import { hhmm } from '../practice/schedule-fixtures.js';

let e: SchedulingEnv;
let staff: PracticeLogin;
beforeAll(async () => {
  e = await practiceEnv();
  staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
}, 60_000);
afterAll(() => e?.close());

const practice = (method: 'PUT' | 'POST', url: string, payload: object) =>
  e.t.app.inject({ method, url: `/practice/v1${url}`, headers: bearer(staff.token), payload });
const plPath = (id: string, what: string) => `/provider_locations/${encodeURIComponent(id)}/${what}`;
const weekdayOf = (date: string): number => ((new Date(`${date}T12:00:00Z`).getUTCDay() + 6) % 7) + 1;

/** The slots of `pl` on `day`, asked twice so the second answer comes from kept data. */
async function kept(pl: string, day: string, opts: { visitReasonId?: string } = {}): Promise<string[]> {
  const first = hhmm(await slots(e, pl, { start: day, end: day, ...opts }));
  expect(hhmm(await slots(e, pl, { start: day, end: day, ...opts }))).toEqual(first);
  return first;
}

describe(`availability from kept schedule data (${engineName})`, () => {
  it('weekly hours changed through the Practice API', async () => {
    const d = nyDate(12);
    expect(await kept(PL.hnl, d)).toContain('08:00');
    const res = await practice('PUT', plPath(PL.hnl, 'weekly_hours'), { hours: [{ weekday: weekdayOf(d), start: '13:00', end: '14:00' }] });
    expect(res.statusCode, res.body).toBe(200);
    expect(hhmm(await slots(e, PL.hnl, { start: d, end: d }))).toEqual(['13:00', '13:30']);
  });

  it('time off through the Practice API, at another location of the provider too', async () => {
    const d = nyDate(13);
    expect((await kept(PL.ny, d)).length).toBeGreaterThan(20);
    expect((await kept(PL.nyElsewhere, d)).length).toBeGreaterThan(20);
    const res = await practice('POST', '/time_off', { provider_id: 'pr_ny', start_date: d, end_date: d, start_local: '08:00', end_local: '17:00' });
    expect(res.statusCode, res.body).toBe(200);
    for (const pl of [PL.ny, PL.nyElsewhere]) {
      const after = hhmm(await slots(e, pl, { start: d, end: d }));
      expect(after.filter((t) => t >= '08:00' && t < '17:00')).toEqual([]);
      expect(after).toContain('17:00');
    }
  });

  it("an operator's TRUNCATE of time_off", async () => {
    const d = nyDate(16);
    const open = hhmm(await slots(e, PL.ny, { start: d, end: d }));
    expect(open.filter((t) => t >= '08:00' && t < '17:00').length).toBeGreaterThan(0);
    const res = await practice('POST', '/time_off', { provider_id: 'pr_ny', start_date: d, end_date: d, start_local: '08:00', end_local: '17:00' });
    expect(res.statusCode, res.body).toBe(200);
    expect((await kept(PL.ny, d)).filter((t) => t >= '08:00' && t < '17:00')).toEqual([]);
    await sql`TRUNCATE time_off`.execute(e.t.db);
    expect(hhmm(await slots(e, PL.ny, { start: d, end: d }))).toEqual(open);
  });

  it('a visit reason override through the Practice API', async () => {
    const d = nyDate(14);
    expect((await kept(PL.phx, d)).slice(0, 3)).toEqual(['00:00', '00:30', '01:00']);
    const res = await practice('PUT', plPath(PL.phx, 'visit_reasons'), { visit_reasons: [{ visit_reason_id: 'pc_t30', duration_minutes: { new: 45 } }] });
    expect(res.statusCode, res.body).toBe(200);
    expect(hhmm(await slots(e, PL.phx, { start: d, end: d })).slice(0, 3)).toEqual(['00:00', '00:45', '01:30']);
    // Not offered there any more: no slot at all.
    expect((await practice('PUT', plPath(PL.phx, 'visit_reasons'), { visit_reasons: [{ visit_reason_id: 'pc_t30', offered: false }] })).statusCode).toBe(200);
    expect(await slots(e, PL.phx, { start: d, end: d })).toEqual([]);
  });

  it('a directory import through the admin API', async () => {
    const d = nyDate(16);
    expect((await kept(PL.ny2, d)).length).toBeGreaterThan(20);
    const doc = { provider_locations: [{ provider_id: 'pr_ny2', location_id: 'lo_ny', weekly_schedule: [{ weekday: weekdayOf(d), start: '09:00', end: '10:00' }] }] };
    const res = await e.t.app.inject({
      method: 'POST',
      url: `/admin/v1/directory/import?developer_id=${e.dev.developer_id}`,
      headers: { authorization: 'Bearer test-admin-token-0123456789abcdefgh', 'content-type': 'application/json' },
      payload: JSON.stringify(doc),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(hhmm(await slots(e, PL.ny2, { start: d, end: d }))).toEqual(['09:00', '09:30']);
  });

  it('a calendar push through /v1, and a booking\'s held time', async () => {
    const d = nyDate(17);
    const before = await kept(PL.manual, d);
    expect(before).not.toContain('07:15');
    const put = await e.t.app.inject({
      method: 'PUT',
      url: `/v1/providers/pr_man/calendar/timeslots?date=${d}`,
      headers: bearer(e.token),
      payload: { timeslots: [{ provider_id: 'pr_man', location_id: 'lo_ny', start_time: `${d}T07:15`, time_zone: 'America/New_York' }] },
    });
    expect(put.statusCode, put.body).toBe(200);
    const pushed = await slots(e, PL.manual, { start: d, end: d });
    expect(hhmm(pushed)).toContain('07:15');
    // Booked: gone from the very next answer (held time is read on every request).
    const at = pushed.find((s) => s.start_time.includes('T07:15'))!.start_time;
    expect((await book(e, PL.manual, at)).statusCode).toBe(200);
    expect(hhmm(await slots(e, PL.manual, { start: d, end: d }))).not.toContain('07:15');
  });

  it('an insurance plan mapped to a provider-location', async () => {
    const d = nyDate(18);
    const withPlan = async (): Promise<number> => {
      const q = new URLSearchParams({ provider_location_ids: PL.ny, visit_reason_id: 'pc_t30', patient_type: 'new', start_date_in_provider_local_time: d, end_date_in_provider_local_time: d, insurance_plan_id: 'ip_u' });
      const res = await e.t.app.inject({ url: `/v1/provider_locations/availability?${q}`, headers: bearer(e.token) });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data[0].timeslots.length;
    };
    expect(await withPlan()).toBe(0);
    expect(await withPlan()).toBe(0);
    await e.t.db.insertInto('provider_location_insurance_plans').values({ env: 'sandbox', provider_location_id: PL.ny, insurance_plan_id: 'ip_u' }).execute();
    expect(await withPlan()).toBeGreaterThan(0);
  });
});
