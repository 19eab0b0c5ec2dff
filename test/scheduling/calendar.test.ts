/** GET/PUT /v1/providers/{provider_id}/calendar/timeslots (docs/api/README.md#operations, docs/api/calendar.md#access, docs/api/calendar.md, docs/api/availability.md#where-bookable-times-come-from). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, clientToken, userToken } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { book, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from '../appointments/fixtures.js';

describe(`calendar timeslots (${engineName})`, () => {
  let e: SchedulingEnv;
  const date = nyDate(9);
  beforeAll(async () => {
    e = await schedulingEnv();
    // pr_phx's weekly schedule is removed: only pushed slots make it bookable.
    await e.t.db.deleteFrom('weekly_schedules').where('provider_location_id', '=', PL.phx).execute();
  });
  afterAll(async () => e.close());

  const url = (provider: string, q: string) => `/v1/providers/${provider}/calendar/timeslots?${q}`;
  const put = (provider: string, body: unknown, token = e.token, d = date) =>
    e.t.app.inject({ method: 'PUT', url: url(provider, `date=${d}`), headers: bearer(token), ...(body === undefined ? {} : { payload: body as object }) });
  const get = (provider: string, q: string, token = e.token) => e.t.app.inject({ url: url(provider, q), headers: bearer(token) });
  const slot = (time: string, over: Record<string, unknown> = {}) => ({
    provider_id: 'pr_phx', location_id: 'lo_phx', start_time: `${date}T${time}`, time_zone: 'America/Phoenix', ...over,
  });

  it('PUT replaces the day, GET reads it back with local times; the slots become bookable', async () => {
    const res = await put('pr_phx', { timeslots: [slot('09:00'), slot('09:30:00', { patient_type: 'new' }), slot('10:00', { excluded_visit_reason_ids: ['pc_t30'] })] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ request_id: res.headers['x-request-id'], errors: { not_found_location_ids: [] } });
    const read = await get('pr_phx', `date=${date}`);
    expect(read.statusCode, read.body).toBe(200);
    const body = read.json();
    expect(body.data.map((s: { start_time: string }) => s.start_time)).toEqual([`${date}T09:00:00`, `${date}T09:30:00`, `${date}T10:00:00`]);
    expect(body.data[0]).toMatchObject({ provider_id: 'pr_phx', location_id: 'lo_phx', time_zone: 'America/Phoenix', allowed_visit_reason_ids: [], excluded_visit_reason_ids: [] });
    expect(body.data[0].timeslot_id).toBeTruthy();
    expect(body).toMatchObject({ limit: 500, next_page_token: null, next_url: null });
    // Availability: 09:00 and 09:30 for pc_t30 new; 10:00 excludes pc_t30; 09:30 is new-only.
    const avail = await slots(e, PL.phx, { start: date, end: date });
    expect(avail.map((s) => s.start_time)).toEqual([`${date}T09:00:00-07:00`, `${date}T09:30:00-07:00`]);
    const existing = await slots(e, PL.phx, { start: date, end: date, patientType: 'existing' });
    expect(existing.map((s) => s.start_time)).toEqual([`${date}T09:00:00-07:00`]);
    const sixty = await slots(e, PL.phx, { start: date, end: date, visitReasonId: 'pc_t60' });
    expect(sixty.map((s) => s.start_time)).toEqual([`${date}T09:00:00-07:00`, `${date}T09:30:00-07:00`, `${date}T10:00:00-07:00`]);
    expect((await book(e, PL.phx, `${date}T09:00:00-07:00`)).statusCode).toBe(200);
    // Booked 09:00–09:30: 09:30 stays free for 30-minute visits.
    expect((await slots(e, PL.phx, { start: date, end: date })).map((s) => s.start_time)).toEqual([`${date}T09:30:00-07:00`]);
  });

  it('a second PUT replaces the day; an empty array, an empty object or an empty body erase it', async () => {
    await put('pr_phx', { timeslots: [slot('11:00')] });
    expect((await get('pr_phx', `date=${date}`)).json().data.map((s: { start_time: string }) => s.start_time)).toEqual([`${date}T11:00:00`]);
    for (const body of [{ timeslots: [] }, {}, undefined]) {
      await put('pr_phx', { timeslots: [slot('11:00')] });
      const res = await put('pr_phx', body);
      expect(res.statusCode, res.body).toBe(200);
      expect((await get('pr_phx', `date=${date}`)).json().data).toEqual([]);
    }
  });

  it('reports unknown locations and stores the rest', async () => {
    const res = await put('pr_phx', { timeslots: [slot('12:00'), slot('12:30', { location_id: 'lo_nowhere' })] });
    expect(res.json().errors.not_found_location_ids).toEqual(['lo_nowhere']);
    expect((await get('pr_phx', `date=${date}`)).json().data).toHaveLength(1);
  });

  it('paginates with next_page_token and a working next_url', async () => {
    const many = Array.from({ length: 25 }, (_, i) => slot(`${String(6 + Math.floor(i / 2)).padStart(2, '0')}:${i % 2 ? '30' : '00'}`));
    await put('pr_phx', { timeslots: many });
    const seen: string[] = [];
    let next: string | null = url('pr_phx', `date=${date}&limit=10`);
    while (next) {
      const u: URL = new URL(next, 'http://x');
      const page: { data: { start_time: string }[]; next_url: string | null; next_page_token: string | null } = (await e.t.app.inject({ url: u.pathname + u.search, headers: bearer(e.token) })).json();
      seen.push(...page.data.map((s: { start_time: string }) => s.start_time));
      next = page.next_url;
      if (next) expect(page.next_page_token).toBeTruthy();
    }
    expect(seen).toHaveLength(25);
    expect([...seen].sort()).toEqual(seen);
    expect((await get('pr_phx', `date=${date}&next_page_token=garbage`)).statusCode).toBe(400);
  });

  it('answers 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ timeslots: [slot('09:00', { provider_id: 'pr_ny' })] }, 'timeslots[0].provider_id'],
      [{ timeslots: [slot('09:00', { start_time: `${nyDate(10)}T09:00` })] }, 'timeslots[0].start_time'],
      [{ timeslots: [slot('09:00', { start_time: `${date}T09:00:00-07:00` })] }, 'timeslots[0].start_time'],
      [{ timeslots: [slot('09:00', { time_zone: 'Mars/Olympus' })] }, 'timeslots[0].time_zone'],
      [{ timeslots: [slot('09:00', { patient_type: 'old' })] }, 'timeslots[0].patient_type'],
      [{ timeslots: 'all' }, 'timeslots'],
      [{ timeslots: Array.from({ length: 1501 }, () => slot('09:00')) }, 'timeslots'],
    ];
    for (const [body, field] of cases) {
      const res = await put('pr_phx', body);
      expect(res.statusCode, field).toBe(400);
      expect(res.json().errors.map((x: { field: string }) => x.field), field).toContain(field);
    }
    expect((await put('pr_phx', { timeslots: [] }, e.token, '2026-02-30')).json().errors[0].field).toBe('date');
    expect((await get('pr_phx', 'limit=5')).statusCode).toBe(400);
    expect((await get('pr_phx', `date=${date}&limit=1001`)).statusCode).toBe(400);
  });

  it('refuses a local time inside the spring-forward gap', async () => {
    const res = await e.t.app.inject({
      // pr_ny2, not pr_ny: pr_ny is shared with another developer's sandbox directory, which refuses calendar writes.
      method: 'PUT', url: url('pr_ny2', 'date=2027-03-14'), headers: bearer(e.token),
      payload: { timeslots: [{ provider_id: 'pr_ny2', location_id: 'lo_ny', start_time: '2027-03-14T02:30', time_zone: 'America/New_York' }] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].message).toContain('daylight-saving');
  });

  it('access: calendar scopes, the developer\'s directory, or the provider\'s own user; nobody else', async () => {
    expect((await e.t.app.inject({ url: url('pr_phx', `date=${date}`) })).statusCode).toBe(401);
    const readOnly = await clientToken(e.t, e.dev, 'external.calendar.read');
    expect((await get('pr_phx', `date=${date}`, readOnly)).statusCode).toBe(200);
    expect((await put('pr_phx', { timeslots: [] }, readOnly)).statusCode).toBe(403);
    const apptOnly = await clientToken(e.t, e.dev, 'external.appointment.read');
    expect((await get('pr_phx', `date=${date}`, apptOnly)).statusCode).toBe(403);
    // The other developer's directory holds pr_ny only.
    expect((await get('pr_phx', `date=${date}`, e.otherToken)).statusCode).toBe(404);
    expect((await get('pr_ny', `date=${date}`, e.otherToken)).statusCode).toBe(200);
    const own = await userToken(e.t, e.dev, { email: 'phx@example.org', password: 'correct horse battery staple', role: 'provider', providerId: 'pr_phx' });
    expect((await put('pr_phx', { timeslots: [slot('15:00')] }, own)).statusCode).toBe(200);
    expect((await get('pr_phx', `date=${date}`, own)).json().data).toHaveLength(1);
    expect((await get('pr_ny', `date=${date}`, own)).statusCode).toBe(403);
    const patientUser = await userToken(e.t, e.dev, { email: 'pat@example.org', password: 'correct horse battery staple' });
    expect((await get('pr_phx', `date=${date}`, patientUser)).statusCode).toBe(403);
  });
});
