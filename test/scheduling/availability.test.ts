/** GET /v1/provider_locations/availability (docs/api/README.md#operations, docs/api/auth.md#scopes, docs/api/availability.md#availability-request, docs/api/availability.md#where-bookable-times-come-from). */
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anonymousToken, bearer, clientToken } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { book, nyDate, PL, schedulingEnv, type SchedulingEnv } from '../appointments/fixtures.js';

describe(`availability endpoint (${engineName})`, () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv();
  });
  afterAll(async () => e.close());

  const get = (params: Record<string, string>, token: string | null = e.token) =>
    e.t.app.inject({ url: `/v1/provider_locations/availability?${new URLSearchParams(params)}`, headers: token ? bearer(token) : {} });
  const base = { visit_reason_id: 'pc_t30', patient_type: 'new' };

  it('one element per requested id in request order, start times in each provider\'s offset', async () => {
    const res = await get({ ...base, provider_location_ids: `${PL.phx},${PL.ny}`, start_date_in_provider_local_time: nyDate(2), end_date_in_provider_local_time: nyDate(3) });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.request_id).toBe(res.headers['x-request-id']);
    expect(body.data.map((d: { provider_location_id: string }) => d.provider_location_id)).toEqual([PL.phx, PL.ny]);
    const [phx, ny] = body.data;
    expect(phx.timeslots).toHaveLength(64);
    expect(phx.timeslots.every((s: { start_time: string }) => s.start_time.endsWith('-07:00'))).toBe(true);
    expect(ny.timeslots[0]).toEqual({ start_time: `${nyDate(2)}T00:00:00-05:00`, visit_reason_id: 'pc_t30' });
    expect(ny.first_availability).toEqual(ny.timeslots[0]);
  });

  it('without a start date the window starts today in each provider\'s own zone (end inclusive, at most 31 days later)', async () => {
    const hnlToday = DateTime.now().setZone('Pacific/Honolulu').toISODate()!;
    const hnlDay = (days: number) => DateTime.fromISO(hnlToday).plus({ days }).toISODate()!;
    const only = (ids: string, endDate: string) => get({ ...base, provider_location_ids: ids, end_date_in_provider_local_time: endDate });
    expect((await only(PL.hnl, hnlToday)).statusCode).toBe(200);
    expect((await only(PL.hnl, hnlDay(31))).statusCode).toBe(200);
    for (const bad of [hnlDay(-1), hnlDay(32)]) {
      const res = await only(PL.hnl, bad);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().errors[0].field).toBe('end_date_in_provider_local_time');
    }
    // New York's today is checked against New York's window, whatever the server's zone.
    expect((await only(PL.ny, nyDate(31))).statusCode).toBe(200);
    expect((await only(PL.ny, nyDate(32))).statusCode).toBe(400);
    expect((await only(PL.ny, nyDate(-1))).statusCode).toBe(400);
  });

  it('offers nothing that starts more than 150 days ahead', async () => {
    const res = await get({ ...base, provider_location_ids: PL.ny, start_date_in_provider_local_time: nyDate(148), end_date_in_provider_local_time: nyDate(153) });
    expect(res.statusCode, res.body).toBe(200);
    const starts = (res.json().data[0].timeslots as { start_time: string }[]).map((s) => s.start_time);
    const horizon = Date.now() + 150 * 86_400_000;
    expect(starts.some((t) => t.startsWith(nyDate(149)))).toBe(true);
    expect(starts.every((t) => Date.parse(t) <= horizon)).toBe(true);
    // The horizon is 150 × 24 h from now, not 150 calendar days: across a DST change it can end just
    // after midnight of New York's 151st day, so the day after the horizon's own day must be empty.
    const dayAfterHorizon = DateTime.fromMillis(horizon, { zone: 'America/New_York' }).plus({ days: 1 }).toISODate()!;
    expect(starts.some((t) => t.startsWith(dayAfterHorizon))).toBe(false);
    expect(Date.parse(starts.at(-1)!)).toBeGreaterThan(horizon - 86_400_000);
  });

  it('durations follow the patient type: new 60 min, existing 40 min', async () => {
    const d = nyDate(2);
    const q = (pt: string) => get({ provider_location_ids: PL.phx, visit_reason_id: 'pc_t60', patient_type: pt, start_date_in_provider_local_time: d, end_date_in_provider_local_time: d });
    const n = (await q('new')).json().data[0].timeslots;
    const x = (await q('existing')).json().data[0].timeslots;
    expect(n).toHaveLength(6 + 10);
    expect(x).toHaveLength(9 + 15);
    expect(x[1].start_time).toBe(`${d}T00:40:00-07:00`);
  });

  it('defaults to today + 7 days in the provider zone and never offers past times', async () => {
    const res = await get({ ...base, provider_location_ids: PL.ny });
    const slots = res.json().data[0].timeslots as { start_time: string }[];
    expect(slots.length).toBeGreaterThan(32 * 6);
    expect(slots.every((s) => Date.parse(s.start_time) > Date.now())).toBe(true);
    expect(slots.at(-1)!.start_time.slice(0, 10)).toBe(nyDate(7));
  });

  it('booked time disappears for the provider at every location; excluded visit reasons and unaccepted reasons yield nothing', async () => {
    const d = nyDate(3);
    const before = (await get({ ...base, provider_location_ids: PL.nyElsewhere, start_date_in_provider_local_time: d, end_date_in_provider_local_time: d })).json().data[0].timeslots;
    await book(e, PL.ny, before[2].start_time);
    const after = (await get({ ...base, provider_location_ids: PL.nyElsewhere, start_date_in_provider_local_time: d, end_date_in_provider_local_time: d })).json().data[0].timeslots;
    expect(after).toHaveLength(before.length - 1);
    const other = await get({ ...base, visit_reason_id: 'pc_other', provider_location_ids: PL.ny, start_date_in_provider_local_time: d, end_date_in_provider_local_time: d });
    expect(other.json().data[0]).toEqual({ provider_location_id: PL.ny, timeslots: [] });
  });

  it('insurance filters: a plan the location does not take gives an empty array', async () => {
    const d = nyDate(3);
    const q = (plan: string) => get({ ...base, provider_location_ids: `${PL.ny},${PL.phx}`, insurance_plan_id: plan, start_date_in_provider_local_time: d, end_date_in_provider_local_time: d });
    const res = (await q('ip_t')).json().data;
    expect(res[0].timeslots.length).toBeGreaterThan(0);
    expect(res[1].timeslots).toEqual([]);
    const carrier = (await get({ ...base, provider_location_ids: PL.phx, insurance_carrier_id: 'ic_t' })).json().data[0];
    expect(carrier.timeslots).toEqual([]);
  });

  it('answers 400 naming the parameter, 404 for ids outside the directory', async () => {
    const ids = { provider_location_ids: PL.ny };
    const cases: [Record<string, string>, string][] = [
      [{ visit_reason_id: 'pc_t30', patient_type: 'new' }, 'provider_location_ids'],
      [{ ...ids, patient_type: 'new' }, 'visit_reason_id'],
      [{ ...ids, visit_reason_id: 'pc_t30' }, 'patient_type'],
      [{ ...ids, ...base, patient_type: 'old' }, 'patient_type'],
      [{ ...ids, ...base, visit_reason_id: 'pc_nope' }, 'visit_reason_id'],
      [{ ...ids, ...base, start_date_in_provider_local_time: '2026-02-30' }, 'start_date_in_provider_local_time'],
      [{ ...ids, ...base, end_date_in_provider_local_time: 'soon' }, 'end_date_in_provider_local_time'],
      [{ ...ids, ...base, start_date_in_provider_local_time: nyDate(5), end_date_in_provider_local_time: nyDate(4) }, 'end_date_in_provider_local_time'],
      [{ ...ids, ...base, start_date_in_provider_local_time: nyDate(1), end_date_in_provider_local_time: nyDate(33) }, 'end_date_in_provider_local_time'],
      [{ ...base, provider_location_ids: Array.from({ length: 51 }, (_, i) => `pr_${i}|lo_${i}`).join(',') }, 'provider_location_ids'],
    ];
    for (const [q, field] of cases) {
      const res = await get(q);
      expect(res.statusCode, JSON.stringify(q)).toBe(400);
      expect(res.json().errors.map((x: { field: string }) => x.field), JSON.stringify(q)).toContain(field);
    }
    const outside = await get({ ...base, provider_location_ids: `${PL.ny},pr_x|lo_x` });
    expect(outside.statusCode).toBe(404);
    expect(outside.json().errors[0].field).toBe('provider_location_ids');
    const otherDev = await get({ ...base, provider_location_ids: PL.phx }, e.otherToken);
    expect(otherDev.statusCode).toBe(404);
  });

  it('needs a token (401) but no scope: narrow and anonymous tokens read it', async () => {
    expect((await get({ ...base, provider_location_ids: PL.ny }, null)).statusCode).toBe(401);
    const narrow = await clientToken(e.t, e.dev, 'external.calendar.read');
    expect((await get({ ...base, provider_location_ids: PL.ny }, narrow)).statusCode).toBe(200);
    const anon = await anonymousToken(e.t, e.dev);
    expect((await get({ ...base, provider_location_ids: PL.ny }, anon)).statusCode).toBe(200);
  });

  it('first_availability looks past an empty window (up to 90 days)', async () => {
    await e.t.db.insertInto('weekly_schedules').values({ env: 'sandbox', provider_location_id: PL.manual, weekday: 1, start_local: '09:00', end_local: '10:00', visit_reason_ids: null, patient_type: null }).execute();
    await e.t.db.deleteFrom('weekly_schedules').where('provider_location_id', '=', PL.manual).where('weekday', '<>', 1).execute();
    await e.t.db.deleteFrom('weekly_schedules').where('provider_location_id', '=', PL.manual).where('start_local', '<>', '09:00').execute();
    // A window with no Monday: three days Tue–Thu (or whichever three days avoid Monday).
    let start = 1;
    while (new Date(`${nyDate(start)}T12:00:00Z`).getUTCDay() !== 2) start++;
    const res = await get({ ...base, provider_location_ids: PL.manual, start_date_in_provider_local_time: nyDate(start), end_date_in_provider_local_time: nyDate(start + 2) });
    const d = res.json().data[0];
    expect(d.timeslots).toEqual([]);
    expect(d.first_availability.start_time).toBe(`${nyDate(start + 6)}T09:00:00-05:00`);
  });
});
