/**
 * The Practice API's schedule routes (docs/scheduling.md, "Practice schedules";
 * docs/decisions/0014-practice-workspace.md, "Schedules", "Isolation") with real workspace tokens:
 * happy paths, 400 naming the fields, 401, scopes and roles (a provider user reads their own
 * provider only and changes nothing), another practice's objects answered 404 with nothing changed
 * in the database, dry runs, 409 for stranded bookings, `allow_stranded`, `/v1` availability at once,
 * and one `schedule_changed` log line of ids per saved change.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { safeLogFields } from '../../src/http/logger.js';
import { book, nyDate, PL, slots, type SchedulingEnv } from '../appointments/fixtures.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { PL_B, PRACTICE_A, PRACTICE_B, PROVIDER_B, practiceEnv, practiceMember, providerUserToken, type PracticeLogin } from '../helpers/practice.js';
import { hhmm } from './schedule-fixtures.js';

let e: SchedulingEnv;
let staffA: PracticeLogin; // practice_staff of practice A (every PL.*)
let staffB: PracticeLogin; // practice_staff of practice B (PL_B)
let readOnlyA: PracticeLogin; // practice_admin of A whose token carries practice.read only
let providerNy: PracticeLogin; // provider user of pr_ny (practice A)
beforeAll(async () => {
  e = await practiceEnv();
  staffA = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
  staffB = await practiceMember(e.t, { practiceId: PRACTICE_B, role: 'practice_staff' });
  readOnlyA = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_admin', scopes: ['practice.read'] });
  providerNy = await providerUserToken(e.t, 'pr_ny');
}, 60_000);
afterAll(() => e?.close());

type Res = Awaited<ReturnType<SchedulingEnv['t']['app']['inject']>>;
const call = (method: 'GET' | 'PUT' | 'PATCH' | 'POST' | 'DELETE', url: string, who?: PracticeLogin, payload?: object): Promise<Res> =>
  e.t.app.inject({ method, url: `/practice/v1${url}`, ...(who ? { headers: bearer(who.token) } : {}), ...(payload ? { payload } : {}) });
const pl = (id: string, rest: string) => `/provider_locations/${encodeURIComponent(id)}/${rest}`;
const fields = (res: Res): string[] => (res.json().errors as { field?: string }[]).map((x) => x.field ?? '').sort();
const weekdayOf = (d: string) => new Date(`${d}T12:00:00Z`).getUTCDay() || 7;

/** The stored weekly blocks of a provider-location, as `weekday start-end`. */
const storedHours = async (id: string): Promise<string[]> =>
  (await sql<{ b: string }>`SELECT weekday || ' ' || to_char(start_local, 'HH24:MI') || '-' || to_char(end_local, 'HH24:MI') AS b
    FROM weekly_schedules WHERE provider_location_id = ${id} ORDER BY weekday, start_local`.execute(e.t.db)).rows.map((r) => r.b);
const timeOffRows = async (providerId: string): Promise<string[]> =>
  (await e.t.db.selectFrom('time_off').select('id').where('provider_id', '=', providerId).orderBy('id').execute()).map((r) => r.id);
const plRow = (id: string) => e.t.db.selectFrom('provider_locations').select(['confirmation_type', 'required_fields']).where('id', '=', id).executeTakeFirstOrThrow();

/** Captures the `schedule_changed` lines written during `run` (the test app logs silently; the calls are still made). */
async function scheduleLogs(run: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const spy = vi.spyOn(e.t.app.log, 'info');
  try {
    await run();
    return spy.mock.calls.map((c) => c[0] as unknown).filter((o): o is Record<string, unknown> => typeof o === 'object' && o !== null && (o as { event?: unknown }).event === 'schedule_changed');
  } finally {
    spy.mockRestore();
  }
}

describe(`GET /practice/v1/provider_locations/{id}/schedule (${engineName})`, () => {
  it('answers the schedule to staff of the practice; a provider user reads their own provider only', async () => {
    const res = await call('GET', pl(PL.ny, 'schedule'), staffA);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ provider_location_id: PL.ny, provider_id: 'pr_ny', location_id: 'lo_ny', time_zone: 'America/New_York', confirmation_type: 'auto', insurance_plan_ids: ['ip_t'] });
    expect(res.json().data.weekly_hours).toHaveLength(14);
    expect((await call('GET', pl(PL.ny, 'schedule'), providerNy)).statusCode).toBe(200);
    expect((await call('GET', pl(PL.ny, 'schedule'), readOnlyA)).statusCode).toBe(200);
    const other = await call('GET', pl(PL.ny2, 'schedule'), providerNy); // another provider of the same practice
    expect(other.statusCode).toBe(404);
    expect(fields(other)).toEqual(['provider_location_id']);
  });

  it('no token 401; another practice\'s or an unknown provider-location 404', async () => {
    const anon = await call('GET', pl(PL.ny, 'schedule'));
    expect(anon.statusCode).toBe(401);
    expect(anon.headers['www-authenticate']).toMatch(/^Bearer/);
    expect((await call('GET', pl(PL_B, 'schedule'), staffA)).statusCode).toBe(404);
    expect((await call('GET', pl(PL.ny, 'schedule'), staffB)).statusCode).toBe(404);
    expect((await call('GET', pl('pr_nope|lo_ny', 'schedule'), staffA)).statusCode).toBe(404);
    expect((await call('GET', pl(PL_B, 'schedule'), staffB)).statusCode).toBe(200);
  });
});

describe(`PUT /practice/v1/provider_locations/{id}/weekly_hours (${engineName})`, () => {
  it('replaces the hours at once (availability, schedule) and logs the change with ids only', async () => {
    const d = nyDate(15);
    const w = weekdayOf(d);
    const hours = [{ weekday: w, start: '07:00', end: '08:00' }, { weekday: w, start: '10:00', end: '11:00', patient_type: 'existing' }];
    const logs = await scheduleLogs(async () => {
      const res = await call('PUT', pl(PL.hnl, 'weekly_hours'), staffA, { hours });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ saved: true, stranded: [], data: hours, request_id: expect.any(String) });
    });
    expect(hhmm(await slots(e, PL.hnl, { start: d, end: d }))).toEqual(['07:00', '07:30']);
    expect((await call('GET', pl(PL.hnl, 'schedule'), staffA)).json().data.weekly_hours).toEqual(hours);
    expect(logs).toEqual([{ event: 'schedule_changed', change: 'weekly_hours_replaced', practice_id: PRACTICE_A, user_id: staffA.userId, provider_location_id: PL.hnl, stranded_count: 0 }]);
    expect(safeLogFields(logs[0]!)).toEqual(logs[0]); // every field is one the logger writes
  });

  it('400 names every bad field, from the schema and from the import\'s rules', async () => {
    const both = await call('PUT', pl(PL.hnl, 'weekly_hours'), staffA, {
      hours: [{ weekday: 9, start: '25:00', end: '08:00' }, { weekday: 2, start: '10:00', end: '09:00', visit_reason_ids: ['pc_t30', 'pc_nope'] }],
      dry_run: 'yes',
    });
    expect(both.statusCode).toBe(400);
    expect(fields(both)).toEqual(['dry_run', 'hours[0].start', 'hours[0].weekday', 'hours[1].end', 'hours[1].visit_reason_ids[1]']);
    const rules = await call('PUT', pl(PL.hnl, 'weekly_hours'), staffA, { hours: [{ weekday: 1, start: '09:00', end: '08:00', visit_reason_ids: ['pc_nope'] }] });
    expect(rules.statusCode).toBe(400);
    expect(fields(rules)).toEqual(['hours[0].end', 'hours[0].visit_reason_ids[0]']);
  });

  it('no token 401; practice.read only or a provider user 403; another practice\'s provider-location 404, nothing changed', async () => {
    const body = { hours: [] };
    const before = await storedHours(PL.ny);
    const beforeB = await storedHours(PL_B);
    expect((await call('PUT', pl(PL.ny, 'weekly_hours'), undefined, body)).statusCode).toBe(401);
    const narrow = await call('PUT', pl(PL.ny, 'weekly_hours'), readOnlyA, body);
    expect(narrow.statusCode).toBe(403);
    expect(narrow.headers['www-authenticate']).toContain('scope="practice.write"');
    expect((await call('PUT', pl(PL.ny, 'weekly_hours'), providerNy, body)).statusCode).toBe(403);
    expect((await call('PUT', pl(PL.ny, 'weekly_hours'), staffB, body)).statusCode).toBe(404);
    expect((await call('PUT', pl(PL_B, 'weekly_hours'), staffA, body)).statusCode).toBe(404);
    expect(await storedHours(PL.ny)).toEqual(before);
    expect(await storedHours(PL_B)).toEqual(beforeB);
    expect(before).toHaveLength(14);
  });

  it('a booking left outside the new hours: dry run lists it and saves nothing, 409 without allow_stranded, saved with it', async () => {
    const d = nyDate(9);
    const w = weekdayOf(d);
    const at = (await slots(e, PL.ny2, { start: d, end: d })).find((s) => s.start_time.includes('T10:30'))!.start_time;
    const booked = await book(e, PL.ny2, at);
    expect(booked.statusCode).toBe(200);
    const id: string = booked.json().data.appointment_id;
    const hours = [...[1, 2, 3, 4, 5, 6, 7].filter((x) => x !== w).map((weekday) => ({ weekday, start: '08:00', end: '18:00' })), { weekday: w, start: '12:00', end: '18:00' }];
    const before = await storedHours(PL.ny2);
    const stranded = [{ appointment_id: id, provider_location_id: PL.ny2, start_time: at, status: 'pending_booking' }];

    const logs = await scheduleLogs(async () => {
      const dry = await call('PUT', pl(PL.ny2, 'weekly_hours'), staffA, { hours, dry_run: true });
      expect(dry.statusCode).toBe(200);
      expect(dry.json()).toMatchObject({ saved: false, stranded, data: hours });
      expect(await storedHours(PL.ny2)).toEqual(before);

      const refused = await call('PUT', pl(PL.ny2, 'weekly_hours'), staffA, { hours });
      expect(refused.statusCode).toBe(409);
      expect(refused.json().errors).toEqual([{ field: 'stranded[0]', message: expect.stringContaining(id) }]);
      expect(refused.body).not.toMatch(/Ada|Lovelace|2125550123/);
      expect(await storedHours(PL.ny2)).toEqual(before);
    });
    expect(logs).toEqual([]); // neither the dry run nor the refusal changed anything

    const allowed = await call('PUT', pl(PL.ny2, 'weekly_hours'), staffA, { hours, allow_stranded: true });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.json()).toMatchObject({ saved: true, stranded });
    expect(await storedHours(PL.ny2)).toContain(`${w} 12:00-18:00`);
    expect(hhmm(await slots(e, PL.ny2, { start: d, end: d }))[0]).toBe('12:00');
  });
});

describe(`PATCH /practice/v1/provider_locations/{id}/settings (${engineName})`, () => {
  it('changes the settings given, keeps the rest, answers the schedule and logs it', async () => {
    const logs = await scheduleLogs(async () => {
      const res = await call('PATCH', pl(PL.manual, 'settings'), staffA, { confirmation_type: 'auto', accepts_booking_requests_from: ['self_pay'] });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toMatchObject({ provider_location_id: PL.manual, confirmation_type: 'auto', accepts_booking_requests_from: ['self_pay'] });
    });
    expect(await plRow(PL.manual)).toMatchObject({ confirmation_type: 'auto' });
    expect(logs).toEqual([{ event: 'schedule_changed', change: 'settings_changed', practice_id: PRACTICE_A, user_id: staffA.userId, provider_location_id: PL.manual }]);
  });

  it('400 names unknown fields, bad values and unknown plans', async () => {
    const res = await call('PATCH', pl(PL.manual, 'settings'), staffA, { confirmation_type: 'sometimes', colour: 'red' });
    expect(res.statusCode).toBe(400);
    expect(fields(res)).toEqual(['colour', 'confirmation_type']);
    const plans = await call('PATCH', pl(PL.manual, 'settings'), staffA, { insurance_plan_ids: ['ip_t', 'ip_nope'] });
    expect(plans.statusCode).toBe(400);
    expect(plans.json().errors).toEqual([{ field: 'insurance_plan_ids[1]', message: 'unknown insurance plan ip_nope' }]);
  });

  it('409 for plans of a practice that manages them at practice level', async () => {
    await e.t.db.updateTable('practices').set({ insurance_managed_at_practice: true }).where('id', '=', PRACTICE_B).execute();
    try {
      const res = await call('PATCH', pl(PL_B, 'settings'), staffB, { insurance_plan_ids: ['ip_t'] });
      expect(res.statusCode).toBe(409);
      expect(fields(res)).toEqual(['insurance_plan_ids']);
    } finally {
      await e.t.db.updateTable('practices').set({ insurance_managed_at_practice: false }).where('id', '=', PRACTICE_B).execute();
    }
  });

  it('no token 401; read-only and provider user 403; another practice\'s provider-location 404, nothing changed', async () => {
    const before = await plRow(PL.ny);
    const beforeB = await plRow(PL_B);
    const body = { confirmation_type: 'manual', required_fields: ['patient.insurance'] };
    expect((await call('PATCH', pl(PL.ny, 'settings'), undefined, body)).statusCode).toBe(401);
    expect((await call('PATCH', pl(PL.ny, 'settings'), readOnlyA, body)).statusCode).toBe(403);
    expect((await call('PATCH', pl(PL.ny, 'settings'), providerNy, body)).statusCode).toBe(403);
    expect((await call('PATCH', pl(PL.ny, 'settings'), staffB, body)).statusCode).toBe(404);
    expect((await call('PATCH', pl(PL_B, 'settings'), staffA, body)).statusCode).toBe(404);
    expect(await plRow(PL.ny)).toEqual(before);
    expect(await plRow(PL_B)).toEqual(beforeB);
    expect(before.confirmation_type).toBe('auto');
  });
});

describe(`/practice/v1/time_off (${engineName})`, () => {
  it('time off leaves /v1 availability at once, is listed, and DELETE frees the slots; both logged', async () => {
    const d = nyDate(20);
    const before = hhmm(await slots(e, PL.ny, { start: d, end: d }));
    const otherProvider = hhmm(await slots(e, PL.ny2, { start: d, end: d }));
    expect(before.length).toBeGreaterThan(20);
    let id = '';
    const logs = await scheduleLogs(async () => {
      const res = await call('POST', '/time_off', staffA, { provider_id: 'pr_ny', start_date: d, end_date: d, note: 'conference' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ saved: true, stranded: [], data: { provider_id: 'pr_ny', provider_location_id: null, start_date: d, end_date: d, note: 'conference', created_by_user_id: staffA.userId } });
      id = res.json().data.time_off_id;
      expect(await slots(e, PL.ny, { start: d, end: d })).toEqual([]);
      expect(await slots(e, PL.nyElsewhere, { start: d, end: d })).toEqual([]);
      expect(hhmm(await slots(e, PL.ny2, { start: d, end: d }))).toEqual(otherProvider); // another provider

      const listed = await call('GET', `/time_off?provider_id=pr_ny&from=${d}&to=${d}`, staffA);
      expect(listed.statusCode).toBe(200);
      expect(listed.json().data.map((t: { time_off_id: string }) => t.time_off_id)).toEqual([id]);
      expect((await call('GET', pl(PL.ny, 'schedule'), providerNy)).json().data.time_off.map((t: { time_off_id: string }) => t.time_off_id)).toContain(id);

      const removed = await call('DELETE', `/time_off/${id}`, staffA);
      expect(removed.statusCode).toBe(200);
      expect(removed.json().data).toEqual({ time_off_id: id });
      expect(hhmm(await slots(e, PL.ny, { start: d, end: d }))).toEqual(before);
      expect((await call('DELETE', `/time_off/${id}`, staffA)).statusCode).toBe(404);
    });
    const base = { event: 'schedule_changed', practice_id: PRACTICE_A, user_id: staffA.userId, provider_id: 'pr_ny', provider_location_id: null, time_off_id: id };
    expect(logs).toEqual([{ ...base, change: 'time_off_added', stranded_count: 0 }, { ...base, change: 'time_off_removed' }]);
    expect(JSON.stringify(logs)).not.toContain('conference'); // the note is the practice's free text: never logged
  });

  it('400 names every bad field (schema and date rules together)', async () => {
    const res = await call('POST', '/time_off', staffA, { provider_id: 'pr_ny', start_date: '2027-02-30', end_date: 'soon', start_local: '25:00', dry_run: 1 });
    expect(res.statusCode).toBe(400);
    expect(fields(res)).toEqual(['dry_run', 'end_date', 'start_date', 'start_local']);
    const order = await call('POST', '/time_off', staffA, { provider_id: 'pr_ny', start_date: nyDate(30), end_date: nyDate(29) });
    expect(fields(order)).toEqual(['end_date']);
    const list = await call('GET', '/time_off?from=tomorrow&to=2027-02-30', staffA);
    expect(list.statusCode).toBe(400);
    expect(fields(list)).toEqual(['from', 'to']);
  });

  it('no token 401; read-only and provider user may list but not write (403); another practice\'s provider or time off 404, nothing changed', async () => {
    const d = nyDate(22);
    const body = { provider_id: 'pr_ny', start_date: d, end_date: d };
    expect((await call('POST', '/time_off', undefined, body)).statusCode).toBe(401);
    expect((await call('GET', '/time_off')).statusCode).toBe(401);
    expect((await call('POST', '/time_off', readOnlyA, body)).statusCode).toBe(403);
    expect((await call('POST', '/time_off', providerNy, body)).statusCode).toBe(403);
    const beforeA = await timeOffRows('pr_ny');
    const beforeB = await timeOffRows(PROVIDER_B);
    expect((await call('POST', '/time_off', staffB, body)).statusCode).toBe(404);
    expect(fields(await call('POST', '/time_off', staffA, { ...body, provider_id: PROVIDER_B }))).toEqual(['provider_id']);
    expect(fields(await call('POST', '/time_off', staffA, { ...body, provider_location_id: PL_B }))).toEqual(['provider_location_id']);
    expect(await timeOffRows('pr_ny')).toEqual(beforeA);
    expect(await timeOffRows(PROVIDER_B)).toEqual(beforeB);

    // B's time off: invisible to A and not removable by A; A's not removable by B, a provider user or read-only staff.
    const offB = (await call('POST', '/time_off', staffB, { ...body, provider_id: PROVIDER_B })).json().data.time_off_id as string;
    const offA = (await call('POST', '/time_off', staffA, body)).json().data.time_off_id as string;
    const idsOf = async (who: PracticeLogin, q = '') => ((await call('GET', `/time_off${q}`, who)).json().data as { time_off_id: string }[]).map((t) => t.time_off_id);
    expect(await idsOf(staffA)).not.toContain(offB);
    expect(await idsOf(staffB)).toEqual([offB]);
    expect((await call('GET', `/time_off?provider_id=${PROVIDER_B}`, staffA)).statusCode).toBe(404);
    expect(await idsOf(readOnlyA)).toContain(offA);
    expect(await idsOf(providerNy)).toContain(offA);
    expect((await call('GET', '/time_off?provider_id=pr_ny2', providerNy)).statusCode).toBe(404);
    expect((await call('DELETE', `/time_off/${offB}`, staffA)).statusCode).toBe(404);
    expect((await call('DELETE', `/time_off/${offA}`, staffB)).statusCode).toBe(404);
    expect((await call('DELETE', `/time_off/${offA}`, providerNy)).statusCode).toBe(403);
    expect((await call('DELETE', `/time_off/${offA}`, readOnlyA)).statusCode).toBe(403);
    expect((await call('DELETE', `/time_off/${offA}`)).statusCode).toBe(401);
    expect(await timeOffRows(PROVIDER_B)).toEqual([offB]);
    expect(await timeOffRows('pr_ny')).toContain(offA);
  });

  it('time off over a live booking: dry run lists it and saves nothing, 409 without allow_stranded, saved with it', async () => {
    const d = nyDate(24);
    const at = (await slots(e, PL.phx, { start: d, end: d }))[20]!.start_time;
    const booked = await book(e, PL.phx, at);
    expect(booked.statusCode).toBe(200);
    const id: string = booked.json().data.appointment_id;
    const body = { provider_id: 'pr_phx', start_date: d, end_date: d };
    const stranded = [{ appointment_id: id, provider_location_id: PL.phx, start_time: at, status: 'pending_booking' }];

    const dry = await call('POST', '/time_off', staffA, { ...body, dry_run: true });
    expect(dry.statusCode).toBe(200);
    expect(dry.json()).toMatchObject({ saved: false, stranded, data: { provider_id: 'pr_phx', start_date: d } });
    expect(await timeOffRows('pr_phx')).toEqual([]);
    expect((await slots(e, PL.phx, { start: d, end: d })).length).toBeGreaterThan(0);

    const refused = await call('POST', '/time_off', staffA, body);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().errors).toEqual([{ field: 'stranded[0]', message: expect.stringContaining(id) }]);
    expect(await timeOffRows('pr_phx')).toEqual([]);

    const allowed = await call('POST', '/time_off', staffA, { ...body, allow_stranded: true });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.json()).toMatchObject({ saved: true, stranded });
    expect(await timeOffRows('pr_phx')).toEqual([allowed.json().data.time_off_id]);
    expect(await slots(e, PL.phx, { start: d, end: d })).toEqual([]);
  });
});
