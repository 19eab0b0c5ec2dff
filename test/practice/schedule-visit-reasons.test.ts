/**
 * A practice's visit reasons per provider-location (docs/decisions/0019-practice-visit-reasons.md)
 * through the Practice API with real workspace tokens: the list, a duration override that `/v1`
 * availability, `/v1` booking and the evaluator's check honour at once, a reason not offered, 400
 * naming the fields, 401/403/404 (another practice's provider-location, nothing changed), stranded
 * bookings (a longer duration overlapping the next booking or running past hours) with dry run, 409
 * and `allow_stranded`, the audit rows of schedule changes, and a directory re-import.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { offersStartAmong } from '../../src/domain/availability/scheduled-start.js';
import { LocalClock } from '../../src/domain/scheduling/local-time.js';
import { loadSchedulesForStarts } from '../../src/domain/scheduling/schedule-for-starts.js';
import { book, nyDate, PL, schedulingDirectory, slots, type SchedulingEnv } from '../appointments/fixtures.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { PL_B, PRACTICE_A, PRACTICE_B, practiceEnv, practiceMember, providerUserToken, type PracticeLogin } from '../helpers/practice.js';
import { hhmm } from './schedule-fixtures.js';

let e: SchedulingEnv;
let staffA: PracticeLogin;
let staffB: PracticeLogin;
let readOnlyA: PracticeLogin;
let providerNy: PracticeLogin;
beforeAll(async () => {
  e = await practiceEnv();
  staffA = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
  staffB = await practiceMember(e.t, { practiceId: PRACTICE_B, role: 'practice_staff' });
  readOnlyA = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_admin', scopes: ['practice.read'] });
  providerNy = await providerUserToken(e.t, 'pr_ny');
}, 60_000);
afterAll(() => e?.close());

type Res = Awaited<ReturnType<SchedulingEnv['t']['app']['inject']>>;
const call = (method: 'GET' | 'PUT', url: string, who?: PracticeLogin, payload?: object): Promise<Res> =>
  e.t.app.inject({ method, url: `/practice/v1${url}`, ...(who ? { headers: bearer(who.token) } : {}), ...(payload ? { payload } : {}) });
const reasons = (id: string) => `/provider_locations/${encodeURIComponent(id)}/visit_reasons`;
const fields = (res: Res): string[] => (res.json().errors as { field?: string }[]).map((x) => x.field ?? '').sort();
const overrides = async (plId: string) =>
  e.t.db.selectFrom('provider_location_visit_reasons').select(['visit_reason_id', 'offered', 'duration_new_minutes', 'duration_existing_minutes'])
    .where('provider_location_id', '=', plId).orderBy('visit_reason_id').execute();
const at = (list: { start_time: string }[], hm: string) => list.find((s) => s.start_time.includes(`T${hm}`))!.start_time;

describe(`Practice API visit reasons (${engineName})`, () => {
  it('lists the directory\'s reasons and durations; a provider user reads their own only; 401 and another practice 404', async () => {
    const res = await call('GET', reasons(PL.hnl), staffA);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      { visit_reason_id: 'pc_t30', name: 'Thirty', offered: true, duration_minutes: { new: 30, existing: 20 }, directory_duration_minutes: { new: 30, existing: 20 }, overridden: false },
      { visit_reason_id: 'pc_t60', name: 'Sixty', offered: true, duration_minutes: { new: 60, existing: 40 }, directory_duration_minutes: { new: 60, existing: 40 }, overridden: false },
    ]);
    expect((await call('GET', reasons(PL.ny), providerNy)).statusCode).toBe(200);
    expect((await call('GET', reasons(PL.ny2), providerNy)).statusCode).toBe(404);
    expect((await call('GET', reasons(PL.ny))).statusCode).toBe(401);
    expect((await call('GET', reasons(PL.ny), staffB)).statusCode).toBe(404);
    expect((await call('GET', reasons(PL_B), staffA)).statusCode).toBe(404);
    expect((await call('GET', reasons(PL_B), staffB)).statusCode).toBe(200);
  });

  it('a 30 -> 60 minute override changes /v1 slots and booking at once, for that patient type only, and is audited', async () => {
    const d = nyDate(12);
    const before = await slots(e, PL.hnl, { start: d, end: d });
    expect(hhmm(before).slice(0, 3)).toEqual(['00:00', '00:30', '01:00']);
    // A booking that day first, so the booking context of this provider-location and day is kept warm.
    expect((await book(e, PL.hnl, at(before, '08:00'))).statusCode).toBe(200);
    const res = await call('PUT', reasons(PL.hnl), staffA, { visit_reasons: [{ visit_reason_id: 'pc_t30', duration_minutes: { new: 60 } }] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ saved: true, stranded: [] });
    expect(res.json().data[0]).toEqual({
      visit_reason_id: 'pc_t30', name: 'Thirty', offered: true, duration_minutes: { new: 60, existing: 20 }, directory_duration_minutes: { new: 30, existing: 20 }, overridden: true,
    });
    expect(await overrides(PL.hnl)).toEqual([{ visit_reason_id: 'pc_t30', offered: true, duration_new_minutes: 60, duration_existing_minutes: null }]);

    const after = await slots(e, PL.hnl, { start: d, end: d });
    expect(hhmm(after).slice(0, 3)).toEqual(['00:00', '01:00', '02:00']);
    expect(hhmm(after)).not.toContain('08:30');
    expect(hhmm(await slots(e, PL.hnl, { start: d, end: d, patientType: 'existing' })).slice(0, 3)).toEqual(['00:00', '00:20', '00:40']);
    // The other provider-locations keep the directory's.
    expect(hhmm(await slots(e, PL.phx, { start: d, end: d })).slice(0, 2)).toEqual(['00:00', '00:30']);

    // A start of the old length is refused, naming start_time; one of the new length is booked for 60 minutes.
    const old = at(before, '08:30');
    const refused = await book(e, PL.hnl, old);
    expect(refused.statusCode).toBe(400);
    expect(fields(refused)).toEqual(['data.start_time']);
    const ok = await book(e, PL.hnl, at(after, '09:00'));
    expect(ok.statusCode).toBe(200);
    const row = await e.t.db.selectFrom('appointments').select(['start_time', 'end_time']).where('id', '=', ok.json().data.appointment_id).executeTakeFirstOrThrow();
    expect(new Date(row.end_time).getTime() - new Date(row.start_time).getTime()).toBe(60 * 60_000);

    // The evaluator's batch check reads the same durations.
    const clock = new LocalClock();
    const { pls, data } = await loadSchedulesForStarts(e.t.db, 'sandbox', [
      { providerLocationId: PL.hnl, visitReasonId: 'pc_t30', startMs: Date.parse(old) },
      { providerLocationId: PL.hnl, visitReasonId: 'pc_t30', startMs: Date.parse(at(after, '10:00')) },
    ]);
    const q = (s: string) => ({ visitReasonId: 'pc_t30', patientType: 'new' as const, startMs: Date.parse(s), now: new Date() });
    expect(offersStartAmong(data, pls.get(PL.hnl)!, q(old), clock)).toBe(false);
    expect(offersStartAmong(data, pls.get(PL.hnl)!, q(at(after, '10:00')), clock)).toBe(true);

    const audit = await e.t.db.selectFrom('practice_audit_log').selectAll().where('provider_location_id', '=', PL.hnl).where('action', '=', 'schedule:visit_reasons_set').execute();
    expect(audit).toEqual([expect.objectContaining({ practice_id: PRACTICE_A, actor_kind: 'staff', actor_user_id: staffA.userId, provider_id: 'pr_hnl', request_id: res.json().request_id })]);
  });

  it('a reason not offered at a provider-location has no slots there and is refused at booking', async () => {
    const d = nyDate(13);
    const search = async (): Promise<string[]> => {
      const r = await e.t.app.inject({ url: '/v1/provider_locations?zip_code=85001&visit_reason_id=pc_t60&max_distance_to_patient_mi=50', headers: bearer(e.token) });
      expect(r.statusCode).toBe(200);
      return (r.json().data.provider_locations as { provider_location_id: string }[]).map((x) => x.provider_location_id);
    };
    expect(await search()).toContain(PL.phx);
    const res = await call('PUT', reasons(PL.phx), staffA, { visit_reasons: [{ visit_reason_id: 'pc_t60', offered: false }] });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.find((r: { visit_reason_id: string }) => r.visit_reason_id === 'pc_t60')).toMatchObject({ offered: false, overridden: true });
    expect(await slots(e, PL.phx, { start: d, end: d, visitReasonId: 'pc_t60' })).toEqual([]);
    const thirty = await slots(e, PL.phx, { start: d, end: d });
    const refused = await book(e, PL.phx, thirty[0]!.start_time, { visit_reason_id: 'pc_t60' });
    expect(refused.statusCode).toBe(400);
    expect(fields(refused)).toContain('data.visit_reason_id');
    // Nor does a search by that visit reason find it there.
    expect(await search()).not.toContain(PL.phx);
    // An empty list gives every reason back its directory values.
    expect((await call('PUT', reasons(PL.phx), staffA, { visit_reasons: [] })).statusCode).toBe(200);
    expect(await overrides(PL.phx)).toEqual([]);
    expect((await slots(e, PL.phx, { start: d, end: d, visitReasonId: 'pc_t60' })).length).toBeGreaterThan(0);
    expect(await search()).toContain(PL.phx);
  });

  it('400 names every bad field: the schema\'s and reasons the provider does not accept or listed twice', async () => {
    const res = await call('PUT', reasons(PL.ny), staffA, {
      visit_reasons: [
        { visit_reason_id: 'pc_t30', duration_minutes: { new: 3, existing: 'x' } },
        { visit_reason_id: 'pc_other' },
      ],
      dry_run: 'yes',
    });
    expect(res.statusCode).toBe(400);
    expect(fields(res)).toEqual(['dry_run', 'visit_reasons[0].duration_minutes.existing', 'visit_reasons[0].duration_minutes.new', 'visit_reasons[1].visit_reason_id']);
    const rules = await call('PUT', reasons(PL.ny), staffA, { visit_reasons: [{ visit_reason_id: 'pc_other' }, { visit_reason_id: 'pc_t30' }, { visit_reason_id: 'pc_t30' }] });
    expect(rules.statusCode).toBe(400);
    expect(fields(rules)).toEqual(['visit_reasons[0].visit_reason_id', 'visit_reasons[2].visit_reason_id']);
    expect(await overrides(PL.ny)).toEqual([]);
  });

  it('no token 401; practice.read only or a provider user 403; another practice\'s provider-location 404, nothing changed', async () => {
    const body = { visit_reasons: [{ visit_reason_id: 'pc_t30', duration_minutes: { new: 45 } }] };
    expect((await call('PUT', reasons(PL.ny), undefined, body)).statusCode).toBe(401);
    const narrow = await call('PUT', reasons(PL.ny), readOnlyA, body);
    expect(narrow.statusCode).toBe(403);
    expect(narrow.headers['www-authenticate']).toContain('scope="practice.write"');
    expect((await call('PUT', reasons(PL.ny), providerNy, body)).statusCode).toBe(403);
    expect((await call('PUT', reasons(PL.ny), staffB, body)).statusCode).toBe(404);
    const foreign = await call('PUT', reasons(PL_B), staffA, { visit_reasons: [{ visit_reason_id: 'pc_nope' }] });
    expect(foreign.statusCode).toBe(404);
    expect(fields(foreign)).toEqual(['provider_location_id']);
    expect(await overrides(PL.ny)).toEqual([]);
    expect(await overrides(PL_B)).toEqual([]);
  });

  it('a longer duration that strands bookings lists them (dry run), is refused (409) and saved with allow_stranded; bookings keep their times', async () => {
    const d = nyDate(9);
    const day = await slots(e, PL.ny2, { start: d, end: d });
    const ids: Record<string, string> = {};
    for (const hm of ['10:00', '10:30', '17:30']) {
      const res = await book(e, PL.ny2, at(day, hm));
      expect(res.statusCode).toBe(200);
      ids[hm] = res.json().data.appointment_id;
    }
    const body = { visit_reasons: [{ visit_reason_id: 'pc_t30', duration_minutes: { new: 60 } }] };
    const expected = [
      { appointment_id: ids['10:00'], provider_location_id: PL.ny2, start_time: at(day, '10:00'), status: 'pending_booking', reason: 'overlaps_next_booking' },
      { appointment_id: ids['17:30'], provider_location_id: PL.ny2, start_time: at(day, '17:30'), status: 'pending_booking', reason: 'outside_open_time' },
    ];
    const dry = await call('PUT', reasons(PL.ny2), staffA, { ...body, dry_run: true });
    expect(dry.statusCode).toBe(200);
    expect(dry.json()).toMatchObject({ saved: false, stranded: expected });
    expect(await overrides(PL.ny2)).toEqual([]);

    const refused = await call('PUT', reasons(PL.ny2), staffA, body);
    expect(refused.statusCode).toBe(409);
    expect(fields(refused)).toEqual(['stranded[0]', 'stranded[1]']);
    expect(await overrides(PL.ny2)).toEqual([]);

    const saved = await call('PUT', reasons(PL.ny2), staffA, { ...body, allow_stranded: true });
    expect(saved.statusCode).toBe(200);
    expect(saved.json()).toMatchObject({ saved: true, stranded: expected });
    const lengths = await sql<{ m: number }>`SELECT (extract(epoch FROM end_time - start_time) / 60)::int AS m FROM appointments
      WHERE id = ANY(${Object.values(ids)}::text[])`.execute(e.t.db);
    expect(lengths.rows.map((r) => Number(r.m))).toEqual([30, 30, 30]);
    // A shorter duration strands nothing.
    const shorter = await call('PUT', reasons(PL.ny2), staffA, { visit_reasons: [{ visit_reason_id: 'pc_t30', duration_minutes: { new: 15 } }], dry_run: true });
    expect(shorter.json().stranded).toEqual([]);
  });

  it('every schedule change writes an audit row with the staff member as actor', async () => {
    const d = nyDate(20);
    const res = await call('PUT', `/provider_locations/${encodeURIComponent(PL.manual)}/weekly_hours`, staffA, { hours: [{ weekday: 1, start: '08:00', end: '18:00' }] });
    expect(res.statusCode).toBe(200);
    const off = await e.t.app.inject({ method: 'POST', url: '/practice/v1/time_off', headers: bearer(staffA.token), payload: { provider_id: 'pr_man', start_date: d, end_date: d } });
    expect(off.statusCode).toBe(200);
    const settings = await e.t.app.inject({ method: 'PATCH', url: `/practice/v1/provider_locations/${encodeURIComponent(PL.manual)}/settings`, headers: bearer(staffA.token), payload: { confirmation_type: 'manual' } });
    expect(settings.statusCode).toBe(200);
    const rows = await e.t.db.selectFrom('practice_audit_log').select(['action', 'actor_kind', 'actor_user_id', 'subject_id']).where('provider_id', '=', 'pr_man').orderBy('id').execute();
    expect(rows).toEqual([
      { action: 'schedule:weekly_hours_replaced', actor_kind: 'staff', actor_user_id: staffA.userId, subject_id: null },
      { action: 'schedule:time_off_added', actor_kind: 'staff', actor_user_id: staffA.userId, subject_id: off.json().data.time_off_id },
      { action: 'schedule:settings_changed', actor_kind: 'staff', actor_user_id: staffA.userId, subject_id: null },
    ]);
  });

  it('a directory re-import keeps the overrides of reasons the provider still accepts and drops the others', async () => {
    expect((await call('PUT', reasons(PL.hnl), staffA, {
      visit_reasons: [{ visit_reason_id: 'pc_t30', duration_minutes: { new: 60 } }, { visit_reason_id: 'pc_t60', duration_minutes: { existing: 50 } }],
    })).statusCode).toBe(200);
    const doc = schedulingDirectory();
    await e.t.db.transaction().execute((trx) => writeDirectory(trx, 'sandbox', doc, { developerId: e.dev.developer_id }));
    expect((await overrides(PL.hnl)).map((o) => o.visit_reason_id)).toEqual(['pc_t30', 'pc_t60']);
    const hnl = doc.providers!.find((p) => p.id === 'pr_hnl')!;
    await e.t.db.transaction().execute((trx) =>
      writeDirectory(trx, 'sandbox', { providers: [{ ...hnl, visit_reason_ids: ['pc_t30'] }] }, { developerId: e.dev.developer_id }));
    expect(await overrides(PL.hnl)).toEqual([{ visit_reason_id: 'pc_t30', offered: true, duration_new_minutes: 60, duration_existing_minutes: null }]);
  });
});
