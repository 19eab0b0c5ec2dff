/**
 * The Practice API's appointment routes over the real app, the real practice guard and real tokens of
 * the workspace client (docs/decisions/0014-practice-workspace.md, "Appointments, calendar and live
 * events", "Isolation", "Scopes"): every route's happy path, its 400 naming the fields, 401 without a
 * token, 403 for a read-only token and a provider user on the moves, 404 (and nothing changed) for
 * another practice's appointment; the booking developer's signed webhooks for the staff's moves; and a
 * staff cancel racing the developer's reschedule through HTTP.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorTransition } from '../../src/domain/appointments/operator-transition.js';
import { setWebhookEndpoint } from '../../src/webhooks/endpoints.js';
import { createWebhookWorker } from '../../src/webhooks/worker.js';
import { nyDate, PL, slots, type SchedulingEnv } from '../appointments/fixtures.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { practiceEnv, practiceMember, PRACTICE_A, PRACTICE_B, providerUserToken, type PracticeLogin } from '../helpers/practice.js';
import { startReceiver } from '../webhooks/receiver.js';
import { bookAt } from './appointment-fixtures.js';

type Res = Awaited<ReturnType<SchedulingEnv['t']['app']['inject']>>;
const fields = (res: Res): string[] => ((res.json() as { errors?: { field?: string }[] }).errors ?? []).map((x) => x.field ?? '');
const message = (res: Res): string => ((res.json() as { errors?: { message: string }[] }).errors ?? []).map((x) => x.message).join('; ');

describe(`practice appointment routes (${engineName})`, () => {
  let e: SchedulingEnv;
  let staff: PracticeLogin;
  let readOnly: PracticeLogin;
  let staffB: PracticeLogin;
  let provider: PracticeLogin;
  let day = 3;
  beforeAll(async () => {
    e = await practiceEnv();
    staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    readOnly = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff', scopes: ['practice.read'] });
    staffB = await practiceMember(e.t, { practiceId: PRACTICE_B, role: 'practice_admin' });
    provider = await providerUserToken(e.t, 'pr_man');
  });
  afterAll(async () => e?.close());

  const call = (method: 'GET' | 'POST', url: string, token?: string, payload?: Record<string, unknown>) =>
    e.t.app.inject({ method, url: `/practice/v1${url}`, headers: token ? bearer(token) : {}, ...(payload ? { payload } : {}) });
  /** A fresh booking through /v1 on its own day (manual location: `pending_booking`). */
  const booked = (pl: string = PL.manual) => bookAt(e, pl, ++day, 1);
  const confirmed = async (pl: string = PL.manual) => {
    const b = await booked(pl);
    await operatorTransition(e.t.db, 'sandbox', b.id, { to: 'confirmed' });
    return b;
  };
  const state = async (id: string) => {
    const a = await e.t.db.selectFrom('appointments').select(['appointment_status', 'start_time', 'pending_start_time', 'arrived_at']).where('id', '=', id).executeTakeFirstOrThrow();
    const holds = await e.t.db.selectFrom('appointment_holds').select('kind').where('appointment_id', '=', id).execute();
    const events = await e.t.db.selectFrom('outbox_events').select('id').where('appointment_id', '=', id).execute();
    return { status: a.appointment_status, start: a.start_time.toISOString(), pending: a.pending_start_time, arrived: a.arrived_at !== null, holds: holds.length, events: events.length };
  };

  describe('GET /calendar', () => {
    const q = (provider_id: string, from = nyDate(day), to = from) => `/calendar?${new URLSearchParams({ provider_id, from, to })}`;
    it('answers the provider\'s appointments and open slots by local day', async () => {
      const b = await booked();
      const res = await call('GET', q('pr_man'), staff.token);
      expect(res.statusCode, res.body).toBe(200);
      const [pl] = res.json().data.provider_locations;
      expect(pl).toMatchObject({ provider_location_id: PL.manual, time_zone: 'America/New_York' });
      const [d] = pl.days;
      expect(d.date).toBe(nyDate(day));
      expect(d.appointments.map((a: { appointment_id: string }) => a.appointment_id)).toContain(b.id);
      expect(d.appointments[0].patient).toEqual({ first_name: expect.any(String), last_name: expect.any(String) });
      expect(d.open_slots.map((s: { start_time: string }) => s.start_time)).not.toContain(b.start);
      expect(d.open_slots.length).toBeGreaterThan(0);
    });
    it('400 names every bad field; 401 without a token; a read-only token reads', async () => {
      const bad = await call('GET', '/calendar?provider_id=pr_man&from=2026-13-01', staff.token);
      expect(bad.statusCode).toBe(400);
      expect(fields(bad)).toEqual(expect.arrayContaining(['from', 'to']));
      const span = await call('GET', q('pr_man', nyDate(1), nyDate(40)), staff.token);
      expect(span.statusCode).toBe(400);
      expect(fields(span)).toEqual(['to']);
      expect((await call('GET', q('pr_man'))).statusCode).toBe(401);
      expect((await call('GET', q('pr_man'), readOnly.token)).statusCode).toBe(200);
    });
    it('a provider user reads their own calendar, another provider is 404; another practice\'s provider is 404', async () => {
      expect((await call('GET', q('pr_man'), provider.token)).statusCode).toBe(200);
      const other = await call('GET', q('pr_ny'), provider.token);
      expect(other.statusCode).toBe(404);
      expect(fields(other)).toEqual(['provider_id']);
      expect((await call('GET', q('pr_man'), staffB.token)).statusCode).toBe(404);
    });
  });

  describe('GET /appointments and GET /appointments/{id}', () => {
    it('lists the practice\'s appointments; 400 names the field; 401; a provider user sees only their own', async () => {
      const mine = await booked();
      const ny = await booked(PL.ny);
      const res = await call('GET', `/appointments?page_size=100&from=${encodeURIComponent(new Date(Date.now()).toISOString())}`, staff.token);
      expect(res.statusCode, res.body).toBe(200);
      const ids = res.json().data.map((a: { appointment_id: string }) => a.appointment_id);
      expect(ids).toEqual(expect.arrayContaining([mine.id, ny.id]));
      const bad = await call('GET', '/appointments?page_size=0&status=nope', staff.token);
      expect(bad.statusCode).toBe(400);
      expect(fields(bad)).toEqual(expect.arrayContaining(['page_size', 'status']));
      expect((await call('GET', '/appointments')).statusCode).toBe(401);
      const own = await call('GET', '/appointments?page_size=100', provider.token);
      expect(own.statusCode).toBe(200);
      const providers = new Set(own.json().data.map((a: { provider_id: string }) => a.provider_id));
      expect([...providers]).toEqual(['pr_man']);
      const theirs = await call('GET', '/appointments?page_size=100', staffB.token);
      expect(theirs.json().data.map((a: { appointment_id: string }) => a.appointment_id)).not.toContain(mine.id);
    });
    it('one appointment: contact details for staff, the name alone for a provider user, 404 for another practice, 400 and 401', async () => {
      const b = await booked();
      const res = await call('GET', `/appointments/${b.id}`, staff.token);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ appointment_id: b.id, provider_id: 'pr_man', appointment_status: 'pending_booking' });
      expect(res.json().data.patient).toMatchObject({ phone_number: expect.any(String), date_of_birth: expect.any(String) });
      const asProvider = await call('GET', `/appointments/${b.id}`, provider.token);
      expect(asProvider.statusCode).toBe(200);
      expect(Object.keys(asProvider.json().data.patient).sort()).toEqual(['first_name', 'last_name']);
      const other = await call('GET', `/appointments/${b.id}`, staffB.token);
      expect(other.statusCode).toBe(404);
      expect(fields(other)).toEqual(['appointment_id']);
      expect((await call('GET', `/appointments/${'x'.repeat(101)}`, staff.token)).statusCode).toBe(400);
      expect((await call('GET', `/appointments/${b.id}`)).statusCode).toBe(401);
    });
  });

  /** Each move: how to get an appointment it applies to, its body, the status after it, a bad body and a 409 case. */
  const moves: {
    name: string;
    ready: () => Promise<{ id: string; start: string }>;
    body?: (a: { id: string; start: string }) => Promise<Record<string, unknown>>;
    after: (s: Awaited<ReturnType<typeof state>>) => void;
    bad?: { body: Record<string, unknown>; field: string };
    /** An appointment the lifecycle does not allow the move for (none for `arrived`: allowed in any status). */
    conflict?: () => Promise<{ id: string; start: string; status: string }>;
  }[] = [
    {
      name: 'confirm', ready: () => booked(), after: (s) => expect(s).toMatchObject({ status: 'confirmed', holds: 1, events: 2 }),
      conflict: async () => ({ ...(await booked(PL.ny)), status: 'pending_booking' }),
    },
    {
      name: 'decline', ready: () => booked(), after: (s) => expect(s).toMatchObject({ status: 'booking_failed', holds: 0, events: 2 }),
      conflict: async () => ({ ...(await confirmed()), status: 'confirmed' }),
    },
    {
      name: 'cancel', ready: () => confirmed(), body: async () => ({ cancellation_reason_type: 'provider_not_available' }),
      after: (s) => expect(s).toMatchObject({ status: 'cancelled', holds: 0, events: 3 }),
      bad: { body: { cancellation_reason_type: 'patient_no_longer_available' }, field: 'cancellation_reason_type' },
      conflict: async () => {
        const b = await booked();
        await operatorTransition(e.t.db, 'sandbox', b.id, { to: 'cancelled', cancellation_reason_type: 'provider_not_available' });
        return { ...b, status: 'cancelled' };
      },
    },
    {
      name: 'move', ready: () => confirmed(),
      body: async () => ({ start_time: (await slots(e, PL.manual, { start: nyDate(day), end: nyDate(day) })).at(-1)!.start_time }),
      after: (s) => expect(s).toMatchObject({ status: 'rescheduled', holds: 1, events: 3, pending: null }),
      bad: { body: { start_time: '2020-01-01T09:00:00-05:00' }, field: 'start_time' },
      conflict: async () => ({ ...(await booked()), status: 'pending_booking' }),
    },
    {
      name: 'arrived', ready: () => confirmed(), after: (s) => expect(s).toMatchObject({ status: 'confirmed', arrived: true, events: 3 }),
    },
    {
      name: 'no_show',
      ready: async () => {
        const b = await confirmed();
        // Started an hour ago (no_show only from the start time until two days after it).
        await e.t.db.updateTable('appointments').set({ start_time: new Date(Date.now() - 3600_000), end_time: new Date(Date.now() - 1800_000) }).where('id', '=', b.id).execute();
        return b;
      },
      after: (s) => expect(s).toMatchObject({ status: 'no_show', holds: 1, events: 3 }),
      conflict: async () => ({ ...(await confirmed()), status: 'confirmed' }),
    },
  ];

  for (const m of moves) {
    describe(`POST /appointments/{id}/${m.name}`, () => {
      const url = (id: string) => `/appointments/${id}/${m.name}`;
      it('applies the move for practice staff', async () => {
        const a = await m.ready();
        const res = await call('POST', url(a.id), staff.token, await m.body?.(a));
        expect(res.statusCode, res.body).toBe(200);
        const after = await state(a.id);
        expect(res.json().data).toEqual({ appointment_id: a.id, appointment_status: after.status });
        m.after(after);
        if (m.name === 'move') expect(after.start).not.toBe(new Date(a.start).toISOString());
        const audit = await e.t.db.selectFrom('audit_log').select(['actor_kind', 'actor_user_id']).where('appointment_id', '=', a.id).where('actor_kind', '=', 'staff').execute();
        expect(audit.map((r) => r.actor_user_id)).toContain(staff.userId);
      });
      it('400 names the field; 401 without a token', async () => {
        const a = await m.ready();
        const before = await state(a.id);
        if (m.bad) {
          const bad = await call('POST', url(a.id), staff.token, m.bad.body);
          expect(bad.statusCode, bad.body).toBe(400);
          expect(fields(bad)).toEqual([m.bad.field]);
        }
        const longId = await call('POST', url('x'.repeat(101)), staff.token, await m.body?.(a));
        expect(longId.statusCode).toBe(400);
        expect(fields(longId)).toEqual(['appointment_id']);
        const anonymous = await call('POST', url(a.id), undefined, await m.body?.(a));
        expect(anonymous.statusCode).toBe(401);
        expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer/);
        expect(await state(a.id)).toEqual(before);
      });
      it('403 for a read-only token and for a provider user; 404 for another practice; nothing changed', async () => {
        const a = await m.ready();
        const before = await state(a.id);
        const body = await m.body?.(a);
        for (const token of [readOnly.token, provider.token]) {
          const res = await call('POST', url(a.id), token, body);
          expect(res.statusCode, res.body).toBe(403);
        }
        const other = await call('POST', url(a.id), staffB.token, body);
        expect(other.statusCode).toBe(404);
        expect(fields(other)).toEqual(['appointment_id']);
        expect(await state(a.id)).toEqual(before);
      });
      it.skipIf(!m.conflict)('409 names the current status when the lifecycle does not allow it', async () => {
        const a = await m.conflict!();
        const before = await state(a.id);
        const res = await call('POST', url(a.id), staff.token, await m.body?.(a));
        expect(res.statusCode, res.body).toBe(409);
        expect(message(res)).toContain(`current status is ${a.status}`);
        expect(await state(a.id)).toEqual(before);
      });
    });
  }

  it('the booking developer\'s receiver gets signed webhooks with the changed attributes of the staff\'s confirm, decline, cancel and move', async () => {
    const key = randomBytes(32).toString('base64');
    const rx = await startReceiver([key]);
    try {
      await setWebhookEndpoint(e.t.db, { env: 'sandbox', developerId: e.dev.developer_id, url: rx.url, key, allowPrivateTargets: true });
      const ok = async (res: Promise<Res>) => expect((await res).statusCode).toBe(200);
      const c = await booked();
      await ok(call('POST', `/appointments/${c.id}/confirm`, staff.token));
      const d = await booked();
      await ok(call('POST', `/appointments/${d.id}/decline`, staff.token));
      const x = await confirmed();
      await ok(call('POST', `/appointments/${x.id}/cancel`, staff.token, { cancellation_reason_type: 'rescheduling_patient' }));
      const mv = await confirmed();
      const to = (await slots(e, PL.manual, { start: nyDate(day), end: nyDate(day) })).at(-1)!.start_time;
      await ok(call('POST', `/appointments/${mv.id}/move`, staff.token, { start_time: to }));
      const worker = createWebhookWorker(e.t.db, { env: 'sandbox', allowPrivateTargets: true, baseDelayMs: 20, maxDelayMs: 100 });
      const ids = [c.id, d.id, x.id, mv.id];
      type Body = { data: { appointment_data: { appointment_id: string; appointment_update_type: string; changed_attributes: { attribute_path: string }[] } } };
      const updates = () => rx.received.map((r) => ({ r, data: (r.body as Body).data.appointment_data })).filter((x) => ids.includes(x.data.appointment_id) && x.data.appointment_update_type !== 'created');
      // One update each for confirm and decline; the operator's confirm and then the staff's move or cancel for the others.
      for (let i = 0; i < 50 && updates().length < 6; i++) await worker.runOnce();
      const got = updates();
      expect(got).toHaveLength(6);
      for (const { r } of got) expect(r.verifiedWith).toEqual([key]);
      const of = (id: string) => got.filter((x) => x.data.appointment_id === id).map((x) => ({ type: x.data.appointment_update_type, changed: x.data.changed_attributes.map((a) => a.attribute_path).sort() }));
      const statusOnly = { type: 'updated', changed: ['appointment.status'] };
      expect(of(c.id)).toEqual([statusOnly]);
      expect(of(d.id)).toEqual([statusOnly]);
      expect(of(x.id)).toEqual(expect.arrayContaining([statusOnly, { type: 'cancelled', changed: ['appointment.status'] }]));
      expect(of(mv.id)).toEqual(expect.arrayContaining([statusOnly, { type: 'updated', changed: ['appointment.start_time', 'appointment.status'] }]));
    } finally {
      await rx.close();
    }
  });

  it('staff cancel against the developer\'s reschedule through HTTP, many rounds: one order or the other, never half-written', async () => {
    const ROUNDS = 12;
    const orders = { cancelFirst: 0, rescheduleFirst: 0 };
    for (let i = 0; i < ROUNDS; i++) {
      const b = await confirmed(PL.ny2);
      const free = (await slots(e, PL.ny2, { start: nyDate(day), end: nyDate(day) })).at(-1)!.start_time;
      const [s, d] = await Promise.all([
        call('POST', `/appointments/${b.id}/cancel`, staff.token, { cancellation_reason_type: 'provider_not_available' }),
        e.t.app.inject({ method: 'POST', url: '/v1/appointments/reschedule', headers: bearer(e.token), payload: { appointment_id: b.id, start_time: free } }),
      ]);
      expect([200, 409], s.body).toContain(s.statusCode);
      expect([200, 409], d.body).toContain(d.statusCode);
      const after = await state(b.id);
      // Whatever the order, the staff's cancel is the last word or the reschedule was refused: no time is held.
      if (s.statusCode === 200) expect(after).toMatchObject({ status: 'cancelled', holds: 0, pending: null });
      if (d.statusCode === 409) {
        orders.cancelFirst++;
        expect(s.statusCode).toBe(200);
        expect(message(d)).toContain('current status is cancelled');
        expect(after.events).toBe(3);
      } else if (s.statusCode === 409) {
        // The reschedule settled first into a status a cancel does not take: it names it, and the new time alone is held.
        expect(message(s)).toMatch(/current status is \w+/);
        expect(after.holds).toBe(1);
      } else {
        orders.rescheduleFirst++;
        expect(after.events).toBe(4);
      }
    }
    expect(orders.cancelFirst + orders.rescheduleFirst).toBeGreaterThan(0);
  });
});
