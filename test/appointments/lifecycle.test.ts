/** Confirm, cancel, reschedule, update-status and the state table (docs/api/appointments.md#lifecycle, docs/api/appointments.md#confirm, docs/api/appointments.md#arrived-and-no-show, docs/api/README.md#operations; docs/api/appointments.md, docs/api/appointments.md#moves-the-service-makes). */
import { sql } from 'kysely';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEvaluatorOnce } from '../../src/domain/appointments/evaluator.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { book, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from './fixtures.js';

describe(`appointment lifecycle (${engineName})`, () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv();
  });
  afterAll(async () => e.close());

  const freeSlot = async (pl: string = PL.ny): Promise<string> => (await slots(e, pl, { start: nyDate(5), end: nyDate(6) }))[0]!.start_time;
  const fresh = async (pl: string = PL.ny): Promise<string> => {
    const s = await freeSlot(pl);
    const res = await book(e, pl, s);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.appointment_id;
  };
  const call = (method: 'POST' | 'PUT', path: string, payload: object) =>
    e.t.app.inject({ method, url: `/v1/appointments/${path}`, headers: bearer(e.token), payload });
  const status = async (id: string) =>
    (await e.t.db.selectFrom('appointments').select('appointment_status').where('id', '=', id).executeTakeFirstOrThrow()).appointment_status;
  const holds = async (id: string) =>
    (await e.t.db.selectFrom('appointment_holds').select('kind').where('appointment_id', '=', id).orderBy('kind').execute()).map((h) => h.kind);

  it('confirm: pending_booking → confirmed; again → 409 naming confirmed; unknown → 404', async () => {
    const id = await fresh(PL.manual);
    const ok = await call('POST', 'confirm', { appointment_id: id });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().data).toEqual({ appointment_id: id, appointment_status: 'confirmed', developer_patient_id: 'dp-1' });
    const again = await call('POST', 'confirm', { appointment_id: id });
    expect(again.statusCode).toBe(409);
    expect(again.json().errors[0].message).toContain('confirmed');
    expect((await call('POST', 'confirm', { appointment_id: 'nope' })).statusCode).toBe(404);
    expect((await call('POST', 'confirm', {})).statusCode).toBe(400);
  });

  it('cancel: releases the time, records the reason; cancelled again → 409 naming cancelled', async () => {
    const id = await fresh();
    const res = await call('POST', 'cancel', { appointment_id: id, cancellation_reason_type: 'other_patient_reason', cancellation_reason: 'Moved away' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.appointment_status).toBe('cancelled');
    expect(await holds(id)).toEqual([]);
    const read = (await e.t.app.inject({ url: `/v1/appointments/${id}`, headers: bearer(e.token) })).json().data;
    expect(read).toMatchObject({ cancellation_reason_type: 'other_patient_reason', cancellation_reason: 'Moved away' });
    const again = await call('POST', 'cancel', { appointment_id: id });
    expect(again.statusCode).toBe(409);
    expect(again.json().errors[0].message).toContain('cancelled');
    // The released time is bookable again.
    const rebook = await book(e, PL.ny, read.start_time);
    expect(rebook.statusCode, rebook.body).toBe(200);
  });

  it('cancel reason rules: free text only with other_*_reason, at most 50, known types', async () => {
    const id = await fresh();
    const free = await call('POST', 'cancel', { appointment_id: id, cancellation_reason_type: 'provider_not_available', cancellation_reason: 'x' });
    expect(free.statusCode).toBe(400);
    expect(free.json().errors[0].field).toBe('cancellation_reason');
    const noType = await call('POST', 'cancel', { appointment_id: id, cancellation_reason: 'x' });
    expect(noType.json().errors[0].field).toBe('cancellation_reason');
    const long = await call('POST', 'cancel', { appointment_id: id, cancellation_reason_type: 'other_provider_reason', cancellation_reason: 'x'.repeat(51) });
    expect(long.json().errors[0].field).toBe('cancellation_reason');
    const badType = await call('POST', 'cancel', { appointment_id: id, cancellation_reason_type: 'bored' });
    expect(badType.json().errors[0].field).toBe('cancellation_reason_type');
    expect((await call('POST', 'cancel', { appointment_id: id })).statusCode).toBe(200);
  });

  it('reschedule: holds the new time next to the old, evaluator resolves to rescheduled and releases the old', async () => {
    const id = await fresh();
    const target = await freeSlot();
    const res = await call('POST', 'reschedule', { appointment_id: id, start_time: target });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.appointment_status).toBe('pending_reschedule');
    // The answer is the record as the reschedule left it: every field as a read shows it right after.
    const after = (await e.t.app.inject({ url: `/v1/appointments/${id}`, headers: bearer(e.token) })).json().data;
    expect(res.json().data.location_phone_number).toBe('2125550100');
    for (const [k, v] of Object.entries(res.json().data)) expect(after[k], k).toEqual(v);
    expect(await holds(id)).toEqual(['current', 'pending']);
    // The new time is taken while pending.
    expect((await book(e, PL.ny, target)).statusCode).toBe(409);
    await runEvaluatorOnce(e.t.db);
    expect(await status(id)).toBe('rescheduled');
    expect(await holds(id)).toEqual(['current']);
    const read = (await e.t.app.inject({ url: `/v1/appointments/${id}`, headers: bearer(e.token) })).json().data;
    expect(read.start_time).toBe(target);
    // Rescheduled appointments may be rescheduled again and cancelled.
    const overlap = DateTime.fromISO(target, { setZone: true }).plus({ minutes: 30 }).toISO({ suppressMilliseconds: true })!;
    const again = await call('POST', 'reschedule', { appointment_id: id, start_time: overlap });
    expect(again.statusCode, again.body).toBe(200);
  });

  it('reschedule while a reschedule is pending: the new time replaces the pending one, a taken time leaves it; each records one event and one audit row', async () => {
    const id = await fresh();
    const [first, second] = (await slots(e, PL.ny, { start: nyDate(5), end: nyDate(6) })).map((s) => s.start_time);
    const during = async () =>
      (await e.t.db.selectFrom('appointment_holds').select(sql<string>`lower(during)`.as('from')).where('appointment_id', '=', id).where('kind', '=', 'pending').execute()).map((h) => new Date(h.from).toISOString());
    const at = (iso: string) => new Date(iso).toISOString();
    expect((await call('POST', 'reschedule', { appointment_id: id, start_time: first })).statusCode).toBe(200);
    expect(await during()).toEqual([at(first!)]);
    const moved = await call('POST', 'reschedule', { appointment_id: id, start_time: second });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().data.appointment_status).toBe('pending_reschedule');
    expect(await holds(id)).toEqual(['current', 'pending']);
    expect(await during()).toEqual([at(second!)]);
    // The first new time is free again; a time another appointment holds is refused and changes nothing.
    const other = await book(e, PL.ny, first!);
    expect(other.statusCode, other.body).toBe(200);
    const taken = await call('POST', 'reschedule', { appointment_id: id, start_time: first });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().errors[0].field).toBe('start_time');
    expect(await during()).toEqual([at(second!)]);
    const audits = await e.t.db.selectFrom('audit_log').select('request_id').where('appointment_id', '=', id).where('action', '=', 'reschedule').orderBy('id').execute();
    expect(audits.map((a) => a.request_id)).toEqual([expect.any(String), moved.headers['x-request-id']]);
    const events = await e.t.db.selectFrom('outbox_events').select(['status', 'update_type']).where('appointment_id', '=', id).where('update_type', '=', 'updated').execute();
    expect(events).toEqual([{ status: 'skipped', update_type: 'updated' }, { status: 'skipped', update_type: 'updated' }]);
  });

  it('reschedule at a provider-location that no longer takes bookings: 400 on start_time, nothing written', async () => {
    const id = await fresh();
    const target = await freeSlot();
    const before = await e.t.db.selectFrom('appointments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    await e.t.db.updateTable('provider_locations').set({ active: false }).where('env', '=', 'sandbox').where('id', '=', PL.ny).execute();
    try {
      const res = await call('POST', 'reschedule', { appointment_id: id, start_time: target });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().errors).toEqual([{ field: 'start_time', message: 'the provider location no longer takes bookings' }]);
      // The same answer for a time that is not even offered: the provider-location is checked first.
      const odd = await call('POST', 'reschedule', { appointment_id: id, start_time: `${nyDate(5)}T07:00:00-05:00` });
      expect(odd.json().errors[0].message).toBe('the provider location no longer takes bookings');
    } finally {
      await e.t.db.updateTable('provider_locations').set({ active: true }).where('env', '=', 'sandbox').where('id', '=', PL.ny).execute();
    }
    expect(await e.t.db.selectFrom('appointments').selectAll().where('id', '=', id).executeTakeFirstOrThrow()).toEqual(before);
    expect(await holds(id)).toEqual(['current']);
  });

  it('reschedule may move into time overlapping its own current time (15 minutes later)', async () => {
    const date = nyDate(20);
    const put = await e.t.app.inject({
      method: 'PUT', url: `/v1/providers/pr_hnl/calendar/timeslots?date=${date}`, headers: bearer(e.token),
      payload: { timeslots: ['09:00', '09:15'].map((t) => ({ provider_id: 'pr_hnl', location_id: 'lo_hnl', start_time: `${date}T${t}`, time_zone: 'Pacific/Honolulu' })) },
    });
    expect(put.statusCode, put.body).toBe(200);
    const created = await book(e, PL.hnl, `${date}T06:00:00-10:00`, { visit_reason_id: 'pc_t60' });
    expect(created.statusCode).toBe(400); // not a schedule start
    const booked = await book(e, PL.hnl, `${date}T09:00:00-10:00`, { visit_reason_id: 'pc_t60' });
    expect(booked.statusCode, booked.body).toBe(200);
    const id = booked.json().data.appointment_id;
    const res = await call('POST', 'reschedule', { appointment_id: id, start_time: `${date}T09:15:00-10:00` });
    expect(res.statusCode, res.body).toBe(200);
    await runEvaluatorOnce(e.t.db);
    expect(await status(id)).toBe('rescheduled');
    const read = (await e.t.app.inject({ url: `/v1/appointments/${id}`, headers: bearer(e.token) })).json().data;
    expect(read.start_time).toBe(`${date}T09:15:00-10:00`);
  });

  it('reschedule errors: 400 not offered / bad format, 404 unknown, 409 taken, 409 from a status the table excludes', async () => {
    const id = await fresh();
    expect((await call('POST', 'reschedule', { appointment_id: id, start_time: `${nyDate(5)}T07:00:00-05:00` })).json().errors[0].field).toBe('start_time');
    expect((await call('POST', 'reschedule', { appointment_id: id, start_time: 'tomorrow' })).statusCode).toBe(400);
    expect((await call('POST', 'reschedule', { appointment_id: 'nope', start_time: await freeSlot() })).statusCode).toBe(404);
    const other = await fresh();
    const otherStart = (await e.t.app.inject({ url: `/v1/appointments/${other}`, headers: bearer(e.token) })).json().data.start_time;
    const taken = await call('POST', 'reschedule', { appointment_id: id, start_time: otherStart });
    expect(taken.statusCode).toBe(409);
    await call('POST', 'cancel', { appointment_id: id });
    const fromCancelled = await call('POST', 'reschedule', { appointment_id: id, start_time: await freeSlot() });
    expect(fromCancelled.statusCode).toBe(409);
    expect(fromCancelled.json().errors[0].message).toContain('cancelled');
  });

  it('update-status arrived: recorded, status unchanged; no_show only 0–2 days after the start', async () => {
    const id = await fresh();
    const arrived = await call('PUT', 'update-status', { appointment_id: id, appointment_status: 'arrived' });
    expect(arrived.statusCode, arrived.body).toBe(200);
    expect(arrived.json().data.appointment_status).toBe('pending_booking');
    const row = await e.t.db.selectFrom('appointments').select('arrived_at').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.arrived_at).not.toBeNull();
    const future = await call('PUT', 'update-status', { appointment_id: id, appointment_status: 'no_show' });
    expect(future.statusCode).toBe(409);
    expect(future.json().errors[0].message).toContain('pending_booking');
    // Move the appointment into the past (as time passing would).
    const move = async (hoursAgo: number) => {
      await e.t.db.deleteFrom('appointment_holds').where('appointment_id', '=', id).execute();
      await e.t.db.updateTable('appointments')
        .set({ start_time: sql`now() - make_interval(hours => ${hoursAgo})`, end_time: sql`now() - make_interval(hours => ${hoursAgo}) + interval '30 minutes'` })
        .where('id', '=', id).execute();
    };
    await move(49);
    expect((await call('PUT', 'update-status', { appointment_id: id, appointment_status: 'no_show' })).statusCode).toBe(409);
    await move(3);
    const ok = await call('PUT', 'update-status', { appointment_id: id, appointment_status: 'no_show' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().data.appointment_status).toBe('no_show');
    expect((await call('PUT', 'update-status', { appointment_id: id, appointment_status: 'confirmed' })).statusCode).toBe(400);
    // no_show is not in confirm's or reschedule's table rows.
    expect((await call('POST', 'confirm', { appointment_id: id })).statusCode).toBe(409);
  });

  it('update-status from any status: arrived is recorded on a cancelled appointment; no_show holds a released time again, or answers 409 when another appointment holds it', async () => {
    const toPast = async (id: string, hoursAgo: number) =>
      e.t.db.updateTable('appointments')
        .set({ start_time: sql`date_trunc('minute', now()) - make_interval(hours => ${hoursAgo})`, end_time: sql`date_trunc('minute', now()) - make_interval(hours => ${hoursAgo}) + interval '30 minutes'` })
        .where('id', '=', id).execute();
    const id = await fresh();
    await call('POST', 'cancel', { appointment_id: id });
    const arrived = await call('PUT', 'update-status', { appointment_id: id, appointment_status: 'arrived' });
    expect(arrived.statusCode, arrived.body).toBe(200);
    expect(arrived.json().data.appointment_status).toBe('cancelled');
    expect((await e.t.db.selectFrom('appointments').select('arrived_at').where('id', '=', id).executeTakeFirstOrThrow()).arrived_at).not.toBeNull();

    await toPast(id, 3);
    const noShow = await call('PUT', 'update-status', { appointment_id: id, appointment_status: 'no_show' });
    expect(noShow.statusCode, noShow.body).toBe(200);
    expect(noShow.json().data.appointment_status).toBe('no_show');
    expect(await holds(id)).toEqual(['current']);

    // Another cancelled appointment whose time someone else holds now cannot become live again.
    const other = await fresh();
    await call('POST', 'cancel', { appointment_id: other });
    await toPast(other, 5);
    const holder = await fresh();
    await e.t.db.updateTable('appointment_holds')
      .set({ during: sql`tstzrange(date_trunc('minute', now()) - interval '5 hours', date_trunc('minute', now()) - interval '5 hours' + interval '30 minutes')` })
      .where('appointment_id', '=', holder).execute();
    const refused = await call('PUT', 'update-status', { appointment_id: other, appointment_status: 'no_show' });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().errors[0].message).toContain('cancelled');
    expect(await status(other)).toBe('cancelled');
    expect(await holds(other)).toEqual([]);
  });

  it('writes an outbox event per change, skipped for the developer\'s own calls', async () => {
    const id = await fresh(PL.manual);
    await call('POST', 'confirm', { appointment_id: id });
    await call('POST', 'cancel', { appointment_id: id });
    const events = await e.t.db.selectFrom('outbox_events').select(['update_type', 'changed_attributes', 'status']).where('appointment_id', '=', id).orderBy('occurred_at').execute();
    expect(events).toEqual([
      { update_type: 'created', changed_attributes: [], status: 'skipped' },
      { update_type: 'updated', changed_attributes: [{ attribute_path: 'appointment.status' }], status: 'skipped' },
      { update_type: 'cancelled', changed_attributes: [{ attribute_path: 'appointment.status' }], status: 'skipped' },
    ]);
  });

  describe('list', () => {
    let ids: string[];
    beforeAll(async () => {
      ids = [];
      for (let i = 0; i < 3; i++) ids.push(await fresh(PL.phx));
      await e.t.db.updateTable('appointments').set({ developer_patient_id: 'list-me' }).where('id', 'in', ids).execute();
    });
    const list = (q: string) => e.t.app.inject({ url: `/v1/appointments?${q}`, headers: bearer(e.token) });

    it('paginates with a working next_url, sorted by start time descending by default', async () => {
      const first = await list('developer_patient_id=list-me&page_size=2');
      expect(first.statusCode, first.body).toBe(200);
      const b = first.json();
      expect(b).toMatchObject({ page: 0, page_size: 2, total_count: 3 });
      expect(b.data).toHaveLength(2);
      expect(b.data[0].start_time > b.data[1].start_time).toBe(true);
      const nextUrl = new URL(b.next_url);
      const second = (await e.t.app.inject({ url: nextUrl.pathname + nextUrl.search, headers: bearer(e.token) })).json();
      expect(second.page).toBe(1);
      expect(second.data).toHaveLength(1);
      expect(second.next_url).toBeNull();
      const asc = (await list('developer_patient_id=list-me&sort_direction=ascending')).json();
      expect(asc.data.map((d: { appointment_id: string }) => d.appointment_id)).toEqual(ids);
    });

    it('filters by status, provider, location, practice and time windows', async () => {
      await call('POST', 'cancel', { appointment_id: ids[0]! });
      const q = (s: string) => list(`developer_patient_id=list-me&${s}`).then((r) => r.json().total_count as number);
      expect(await q('statuses=cancelled')).toBe(1);
      expect(await q('statuses=cancelled,pending_booking')).toBe(3);
      expect(await q('provider_ids=pr_phx')).toBe(3);
      expect(await q('provider_ids=pr_ny')).toBe(0);
      expect(await q('location_ids=lo_phx,lo_ny')).toBe(3);
      expect(await q('practice_ids=pt_t')).toBe(3);
      expect(await q('start_time_utc_min=2099-01-01T00:00:00Z')).toBe(0);
      expect(await q('start_time_utc_max=2099-01-01T00:00:00Z')).toBe(3);
      expect(await q('created_time_utc_min=2000-01-01T00:00:00Z&created_time_utc_max=2099-01-01T00:00:00Z')).toBe(3);
      expect(await q(`last_modified_time_utc_min=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`)).toBe(3);
      expect(await q('sort_by=created_time_utc&sort_direction=ascending')).toBe(3);
      expect(await q('sort_by=last_modified_time_utc')).toBe(3);
    });

    it('answers 400 naming the bad parameter', async () => {
      for (const [qs, field] of [
        ['page=11', 'page'], ['page=-1', 'page'], ['page_size=0', 'page_size'], ['page_size=101', 'page_size'],
        ['statuses=confirmed,bogus', 'statuses'], ['sort_by=name', 'sort_by'], ['sort_direction=up', 'sort_direction'],
        ['start_time_utc_min=yesterday', 'start_time_utc_min'], ['created_time_utc_max=2020-13-01', 'created_time_utc_max'],
      ] as const) {
        const res = await list(qs);
        expect(res.statusCode, qs).toBe(400);
        expect(res.json().errors.map((x: { field: string }) => x.field), qs).toContain(field);
      }
    });

    it('never reaches beyond 1,000 appointments through pagination', async () => {
      const res = (await list('page=10&page_size=100')).json();
      expect(res.data).toHaveLength(0);
      expect(res.next_url).toBeNull();
    });
  });
});
