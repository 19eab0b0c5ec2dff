/**
 * The console's developer tool routes (docs/console.md, "Webhooks", "Request log", "Usage",
 * "Sandbox tools"; docs/decisions/0015-developer-console.md) over HTTP with real console tokens of
 * two accounts, each with the sandbox developer its sign-up made: every route's happy path, the field
 * a 400 names, 401 without a console token (none, a `/v1` machine token, a patient token, a practice
 * staff token), and one account on the other's developer answered 404 with nothing changed. End to
 * end: a real local receiver verifies the test event; a fixture run's booking produces a delivery that
 * the delivery log shows and a replay sends again with the same `webhook-id`; the request log shows
 * the account's own `/v1` calls by `request_id` and never the other account's.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEvaluatorOnce } from '../../src/domain/appointments/evaluator.js';
import { ensureSandboxFixtures } from '../../src/domain/directory/sandbox-fixtures.js';
import { sandboxBookingOutcomes } from '../../src/domain/sandbox/booking-outcomes.js';
import { createWebhookWorker } from '../../src/webhooks/worker.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { bearer, userToken } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { addPracticeB, PRACTICE_B, practiceMember } from '../helpers/practice.js';
import { scaled } from '../helpers/scale.js';
import { patient } from '../appointments/fixtures.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { consoleAccountWithMachine, toolRoutes, toolsBase, type ConsoleAccount, type Method } from './tools-env.js';

type Account = ConsoleAccount;

describe(`console developer tool routes (${engineName})`, () => {
  let t: TestApp;
  let a: Account;
  let b: Account;
  let rx: Receiver;
  let rxB: Receiver;
  /** Keys the receivers check signatures with. */
  const keyA = randomBytes(32).toString('base64');
  const keyB = randomBytes(32).toString('base64');
  const other: { patient?: string; staff?: string } = {};

  beforeAll(async () => {
    t = await testApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', HOST: '127.0.0.1' });
    await t.db.transaction().execute((trx) => ensureSandboxFixtures(trx));
    a = await consoleAccountWithMachine(t);
    b = await consoleAccountWithMachine(t);
    rx = await startReceiver([keyA]);
    rxB = await startReceiver([keyB]);
    const third = await newDeveloper(t, 'Third party');
    await addPracticeB(t, third.developer_id);
    other.patient = await userToken(t, third, { email: `tools-patient-${process.pid}@example.org`, password: 'patient-pass-1' });
    other.staff = (await practiceMember(t, { practiceId: PRACTICE_B, role: 'practice_admin' })).token;
  }, 120_000);
  afterAll(async () => {
    await rx?.close();
    await rxB?.close();
    await t?.close();
  });

  const base = toolsBase;
  const routes = toolRoutes;
  const call = (who: { token: string } | undefined, method: Method, path: string, payload?: unknown) =>
    t.app.inject({ method, url: path, headers: who ? bearer(who.token) : {}, ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}) });
  const fields = (res: { json(): { errors?: { field?: string }[] } }) => (res.json().errors ?? []).map((x) => x.field);
  const worker = () => createWebhookWorker(t.db, { env: 'sandbox', allowPrivateTargets: true, reflectPrivateAnswers: true, baseDelayMs: 10, maxDelayMs: 20 });
  const receiverUrl = async (developerId: string) =>
    (await t.db.selectFrom('webhook_endpoints').select('url').where('developer_id', '=', developerId).executeTakeFirst())?.url ?? null;

  it('every route answers 401 without a console token: none, a /v1 machine token, a patient token, a practice staff token', async () => {
    for (const r of routes()) {
      const none = await call(undefined, r.method, r.path(a.developerId), r.payload);
      expect(none.statusCode, `${r.method} ${r.path('x')} without a token`).toBe(401);
      expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
      for (const [who, token] of [['machine', a.machineToken], ['patient', other.patient!], ['staff', other.staff!]] as const) {
        const res = await call({ token }, r.method, r.path(a.developerId), r.payload);
        expect(res.statusCode, `${r.method} ${r.path('x')} with a ${who} token`).toBe(401);
        expect(res.headers['www-authenticate']).toContain('invalid_token');
      }
    }
    expect(await receiverUrl(a.developerId)).toBeNull();
    expect(await t.db.selectFrom('appointments').select('id').where('developer_id', '=', a.developerId).execute()).toEqual([]);
  });

  it('PUT/GET webhook: sets the receiver (key never shown back), 400 names url or key, 409 test event without a receiver', async () => {
    const noReceiver = await call(b, 'POST', `${base(b.developerId)}/webhook/test`);
    expect(noReceiver.statusCode).toBe(409);
    expect((await call(b, 'GET', `${base(b.developerId)}/webhook`)).json()).toEqual({ data: null });

    expect(fields(await call(a, 'PUT', `${base(a.developerId)}/webhook`, { url: 'ftp://example.org/hook' }))).toContain('url');
    const badKey = await call(a, 'PUT', `${base(a.developerId)}/webhook`, { url: rx.url, key: 'not base64 !!' });
    expect(badKey.statusCode).toBe(400);
    expect(fields(badKey)).toContain('key');
    const missing = await call(a, 'PUT', `${base(a.developerId)}/webhook`, {});
    expect(missing.statusCode).toBe(400);
    expect(fields(missing)).toContain('url');
    expect(await receiverUrl(a.developerId)).toBeNull();

    const set = await call(a, 'PUT', `${base(a.developerId)}/webhook`, { url: rx.url, key: keyA });
    expect(set.statusCode).toBe(200);
    expect(set.json().data).toEqual({ url: rx.url, generated_key: null, previous_key_expires_at: null });
    const got = await call(a, 'GET', `${base(a.developerId)}/webhook`);
    expect(got.statusCode).toBe(200);
    expect(got.json().data).toMatchObject({ url: rx.url, previous_key_expires_at: null });
    expect(got.body).not.toContain(keyA);

    const setB = await call(b, 'PUT', `${base(b.developerId)}/webhook`, { url: rxB.url, key: keyB });
    expect(setB.statusCode).toBe(200);
    expect(await receiverUrl(b.developerId)).toBe(rxB.url);
  });

  it('POST webhook/test: a signed test event the real receiver verifies, shown in the delivery log', async () => {
    const before = rx.received.length;
    const res = await call(a, 'POST', `${base(a.developerId)}/webhook/test`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ delivered: true, status_code: 200, response_excerpt: 'ok', answer_withheld: false });
    const got = rx.received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0]!.verifiedWith).toEqual([keyA]);
    expect(got[0]!.headers['webhook-id']).toBe(res.json().data.event_id);
    const log = await call(a, 'GET', `${base(a.developerId)}/webhook/deliveries`);
    expect(log.statusCode).toBe(200);
    expect(log.json().data.deliveries).toContainEqual(expect.objectContaining({ event_id: res.json().data.event_id, event_kind: 'test', status_code: 200 }));
    expect(rxB.received).toEqual([]);
  });

  it('GET webhook/deliveries and POST webhook/replays: 400 names status, cursor, since', async () => {
    const q = (s: string) => call(a, 'GET', `${base(a.developerId)}/webhook/deliveries?${s}`);
    const badStatus = await q('status=bogus');
    expect(badStatus.statusCode).toBe(400);
    expect(fields(badStatus)).toContain('status');
    const badCursor = await q('cursor=junk');
    expect(badCursor.statusCode).toBe(400);
    expect(fields(badCursor)).toContain('cursor');
    const badPage = await q('page_size=0');
    expect(badPage.statusCode).toBe(400);
    expect(fields(badPage)).toContain('page_size');
    for (const body of [{ since: 'yesterday' }, {}]) {
      const res = await call(a, 'POST', `${base(a.developerId)}/webhook/replays`, body);
      expect(res.statusCode).toBe(400);
      expect(fields(res)).toContain('since');
    }
    const none = await call(a, 'POST', `${base(a.developerId)}/webhook/replays`, { since: new Date(Date.now() - 3600_000).toISOString() });
    expect(none.statusCode).toBe(202);
    expect(none.json().data).toEqual({ replayed: 0 });
    const unknown = await call(a, 'POST', `${base(a.developerId)}/webhook/deliveries/ev_nothing/replay`);
    expect(unknown.statusCode).toBe(404);
  });

  it('GET sandbox/fixtures lists the four; a fixture run books, the webhook follows, shows in the log, and a replay sends the same webhook-id again', async () => {
    const list = await call(a, 'GET', `${base(a.developerId)}/sandbox/fixtures`);
    expect(list.statusCode).toBe(200);
    expect((list.json().data as { name: string }[]).map((f) => f.name).sort()).toEqual(['failed', 'manual', 'pending', 'reschedule-failed']);
    const unknown = await call(a, 'POST', `${base(a.developerId)}/sandbox/fixtures/nope/run`);
    expect(unknown.statusCode).toBe(404);
    expect(fields(unknown)).toContain('name');

    const run = await call(a, 'POST', `${base(a.developerId)}/sandbox/fixtures/failed/run`);
    expect(run.statusCode).toBe(201);
    const appointmentId = run.json().data.appointment_id as string;
    expect(run.json().data).toMatchObject({ appointment_status: 'pending_booking', fixture: { name: 'failed', webhook: true } });
    // The background jobs, once each: the evaluator fails the booking, the worker delivers the webhook.
    await runEvaluatorOnce(t.db, { env: 'sandbox', outcomes: sandboxBookingOutcomes });
    await worker().runOnce();
    const hooks = () => rx.received.filter((r) => (r.body as { data?: { appointment_data?: { appointment_id?: string } } }).data?.appointment_data?.appointment_id === appointmentId);
    expect(hooks()).toHaveLength(1);
    expect(hooks()[0]!.verifiedWith).toEqual([keyA]);
    const webhookId = String(hooks()[0]!.headers['webhook-id']);

    const log = await call(a, 'GET', `${base(a.developerId)}/webhook/deliveries?appointment_id=${encodeURIComponent(appointmentId)}`);
    expect(log.statusCode).toBe(200);
    const deliveries = log.json().data.deliveries as { event_id: string; event_kind: string; update_type: string; event_status: string; attempt: number }[];
    expect(deliveries).toEqual([expect.objectContaining({ event_id: webhookId, event_kind: 'appointment', update_type: 'updated', event_status: 'delivered', attempt: 1, status_code: 200 })]);
    const delivered = await call(a, 'GET', `${base(a.developerId)}/webhook/deliveries?status=delivered`);
    expect((delivered.json().data.deliveries as { event_id: string }[]).map((d) => d.event_id)).toContain(webhookId);

    // B cannot replay A's event through B's own developer either: not B's event.
    const theirs = await call(b, 'POST', `${base(b.developerId)}/webhook/deliveries/${webhookId}/replay`);
    expect(theirs.statusCode).toBe(404);

    const replay = await call(a, 'POST', `${base(a.developerId)}/webhook/deliveries/${webhookId}/replay`);
    expect(replay.statusCode).toBe(202);
    expect(replay.json().data).toEqual({ event_id: webhookId, status: 'pending' });
    const again = await call(a, 'POST', `${base(a.developerId)}/webhook/deliveries/${webhookId}/replay`);
    expect(again.statusCode).toBe(409);
    await worker().runOnce();
    expect(hooks().map((h) => h.headers['webhook-id'])).toEqual([webhookId, webhookId]);
    expect(hooks()[1]!.verifiedWith).toEqual([keyA]);
    expect(rxB.received).toEqual([]);
  });

  it("a /v1 booking with A's machine token at the `failed` fixture: its webhook shows in A's delivery log, not B's", async () => {
    const pl = 'pr_failed|lo_failed';
    const q = new URLSearchParams({ provider_location_ids: pl, visit_reason_id: 'pc_sandbox_visit', patient_type: 'new' });
    const avail = await t.app.inject({ url: `/v1/provider_locations/availability?${q}`, headers: bearer(a.machineToken) });
    expect(avail.statusCode).toBe(200);
    const slot = (avail.json().data[0].timeslots as { start_time: string }[])[0]!;
    const booked = await t.app.inject({
      method: 'POST', url: '/v1/appointments', headers: bearer(a.machineToken),
      payload: { appointment_type: 'providers', data: { start_time: slot.start_time, visit_reason_id: 'pc_sandbox_visit', provider_location_id: pl, patient_type: 'new', patient: patient() } },
    });
    expect(booked.statusCode).toBe(200);
    const appointmentId = booked.json().data.appointment_id as string;
    await runEvaluatorOnce(t.db, { env: 'sandbox', outcomes: sandboxBookingOutcomes });
    await worker().runOnce();
    const hook = rx.received.find((r) => (r.body as { data?: { appointment_data?: { appointment_id?: string } } }).data?.appointment_data?.appointment_id === appointmentId);
    expect(hook?.verifiedWith).toEqual([keyA]);
    const log = await call(a, 'GET', `${base(a.developerId)}/webhook/deliveries?appointment_id=${encodeURIComponent(appointmentId)}`);
    expect(log.json().data.deliveries).toEqual([expect.objectContaining({ event_id: hook!.headers['webhook-id'], update_type: 'updated', event_status: 'delivered' })]);
    const bLog = await call(b, 'GET', `${base(b.developerId)}/webhook/deliveries?appointment_id=${encodeURIComponent(appointmentId)}`);
    expect(bLog.json().data.deliveries).toEqual([]);
  });

  it("GET request-log: A's own /v1 calls by request_id, never B's; 400 names status or cursor", async () => {
    const mine = await t.app.inject({ url: '/v1/appointments/ap_missing_a', headers: bearer(a.machineToken) });
    const theirs = await t.app.inject({ url: '/v1/appointments/ap_missing_b', headers: bearer(b.machineToken) });
    expect(mine.statusCode).toBe(404);
    expect(theirs.statusCode).toBe(404);
    const mineId = String(mine.headers['x-request-id']);
    const theirId = String(theirs.headers['x-request-id']);
    const byId = (who: Account, dev: string, id: string) => call(who, 'GET', `${base(dev)}/request-log?request_id=${encodeURIComponent(id)}`);
    // The request log is written by a buffered flush: wait for it.
    const deadline = Date.now() + scaled(5000);
    let found = await byId(a, a.developerId, mineId);
    while ((found.json().data.requests as unknown[]).length === 0 || (await byId(b, b.developerId, theirId)).json().data.requests.length === 0) {
      if (Date.now() > deadline) throw new Error('request log not flushed');
      await new Promise((r) => setTimeout(r, 50));
      found = await byId(a, a.developerId, mineId);
    }
    expect(found.statusCode).toBe(200);
    expect(found.json().data.requests).toEqual([expect.objectContaining({ request_id: mineId, method: 'GET', status: 404, client_id: a.machine.client_id })]);
    expect(found.json().data.requests[0].error).toMatchObject({ request_id: mineId });
    expect((await byId(a, a.developerId, theirId)).json().data.requests).toEqual([]);
    const all = await call(a, 'GET', `${base(a.developerId)}/request-log?page_size=500`);
    const ids = (all.json().data.requests as { request_id: string; client_id: string }[]);
    expect(ids.map((r) => r.request_id)).toContain(mineId);
    expect(ids.map((r) => r.request_id)).not.toContain(theirId);
    expect(ids.every((r) => r.client_id === a.machine.client_id)).toBe(true);
    const errorsOnly = await call(a, 'GET', `${base(a.developerId)}/request-log?status=error`);
    expect((errorsOnly.json().data.requests as { status: number }[]).every((r) => r.status >= 400)).toBe(true);

    for (const [q, field] of [['status=teapot', 'status'], ['cursor=junk', 'cursor'], ['page_size=0', 'page_size']] as const) {
      const res = await call(a, 'GET', `${base(a.developerId)}/request-log?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(fields(res)).toContain(field);
    }
  });

  it('GET usage: A\'s calls per app and day and the rate-limit headroom; 400 names days', async () => {
    const res = await call(a, 'GET', `${base(a.developerId)}/usage?days=7`);
    expect(res.statusCode).toBe(200);
    type Day = { app_id: string | null; requests: number; errors: number; clients: { client_id: string }[] };
    const data = res.json().data as { days: Day[]; rate_limit: { per_minute: number; by_app: { app_id: string }[]; by_client: { client_id: string }[] } };
    expect(data.days.length).toBeGreaterThan(0);
    expect(data.days.every((d) => d.app_id === a.appId && d.clients.every((c) => c.client_id === a.machine.client_id))).toBe(true);
    expect(data.days.reduce((n, d) => n + d.errors, 0)).toBeGreaterThanOrEqual(1);
    expect(data.rate_limit.per_minute).toBe(t.config.rateLimitPerMinute);
    expect(data.rate_limit.by_app.map((x) => x.app_id)).toEqual([a.appId]);
    expect(data.rate_limit.by_client.map((c) => c.client_id)).toEqual([a.machine.client_id]);
    for (const days of ['0', '91', '1.5', 'x']) {
      const bad = await call(a, 'GET', `${base(a.developerId)}/usage?days=${days}`);
      expect(bad.statusCode, days).toBe(400);
      expect(fields(bad)).toContain('days');
    }
  });

  it("A on B's developer: 404 on every route, and nothing of B's changes", async () => {
    // B has an appointment and a delivered event of its own.
    const run = await call(b, 'POST', `${base(b.developerId)}/sandbox/fixtures/failed/run`);
    expect(run.statusCode).toBe(201);
    await runEvaluatorOnce(t.db, { env: 'sandbox', outcomes: sandboxBookingOutcomes });
    await worker().runOnce();
    expect(rxB.received).toHaveLength(1);
    const bEvent = String(rxB.received[0]!.headers['webhook-id']);
    const snapshot = async () => ({
      url: await receiverUrl(b.developerId),
      appointments: (await t.db.selectFrom('appointments').select(['id', 'appointment_status']).where('developer_id', '=', b.developerId).orderBy('id').execute()),
      events: (await t.db.selectFrom('outbox_events').select(['id', 'status']).where('developer_id', '=', b.developerId).orderBy('id').execute()),
      deliveries: (await t.db.selectFrom('webhook_deliveries').select('id').where('developer_id', '=', b.developerId).execute()).length,
    });
    const before = await snapshot();
    expect(before.appointments).toHaveLength(1);

    const attempts = routes().map((r) => (r.path(b.developerId).includes('ev_whatever') ? { ...r, path: () => `${base(b.developerId)}/webhook/deliveries/${bEvent}/replay` } : r));
    attempts.push({ method: 'PUT', path: () => `${base(b.developerId)}/webhook`, payload: { url: rx.url, key: keyA } });
    for (const r of attempts) {
      const res = await call(a, r.method, r.path(b.developerId), r.payload);
      expect(res.statusCode, `${r.method} ${r.path(b.developerId)}`).toBe(404);
      expect(fields(res)).toEqual(['developer_id']);
      expect(res.body).not.toContain(rxB.url);
    }
    // A developer that does not exist answers the same.
    expect((await call(a, 'GET', `${base('dv_nobody')}/webhook`)).statusCode).toBe(404);
    expect(await snapshot()).toEqual(before);
    expect(rxB.received).toHaveLength(1);
    expect(rx.received.some((r) => r.headers['webhook-id'] === bEvent)).toBe(false);
  });

  it("POST sandbox/reset deletes A's sandbox data only; A's receiver stays", async () => {
    const bAppointments = await t.db.selectFrom('appointments').select('id').where('developer_id', '=', b.developerId).execute();
    expect(bAppointments.length).toBeGreaterThan(0);
    const res = await call(a, 'POST', `${base(a.developerId)}/sandbox/reset`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ appointments: 2, patients: 2 });
    expect(res.json().data.outbox_events).toBeGreaterThanOrEqual(2);
    expect(res.json().data.request_log).toBeGreaterThanOrEqual(1);
    expect(await t.db.selectFrom('appointments').select('id').where('developer_id', '=', a.developerId).execute()).toEqual([]);
    expect(await t.db.selectFrom('appointments').select('id').where('developer_id', '=', b.developerId).execute()).toEqual(bAppointments);
    expect(await receiverUrl(a.developerId)).toBe(rx.url);
    const log = await call(a, 'GET', `${base(a.developerId)}/webhook/deliveries`);
    expect(log.json().data.deliveries).toEqual([]);
    const again = await call(a, 'POST', `${base(a.developerId)}/sandbox/reset`);
    expect(again.json().data).toMatchObject({ appointments: 0, patients: 0, outbox_events: 0 });
  });
});
