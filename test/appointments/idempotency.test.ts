/** Idempotency-Key on POST (docs/api/conventions.md#idempotency): same key and body → the first answer; other body → 409; per developer, 24 h. */
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { fetchReportingStalls } from '../helpers/stall-report.js';
import { createBody, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from './fixtures.js';

describe(`Idempotency-Key (${engineName})`, () => {
  let e: SchedulingEnv;
  let day: { start_time: string }[];
  beforeAll(async () => {
    e = await schedulingEnv();
    day = await slots(e, PL.ny, { start: nyDate(4), end: nyDate(4) });
  });
  afterAll(async () => e.close());

  const post = (url: string, payload: object, key?: string, token = e.token) =>
    e.t.app.inject({ method: 'POST', url, headers: { ...bearer(token), ...(key !== undefined ? { 'idempotency-key': key } : {}) }, payload });
  const appointments = async () => Number((await e.t.db.selectFrom('appointments').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  it('a repeat with the same key and body returns the first answer and books once', async () => {
    const body = createBody(PL.ny, day[0]!.start_time);
    const before = await appointments();
    const first = await post('/v1/appointments', body, 'key-1');
    expect(first.statusCode).toBe(200);
    const second = await post('/v1/appointments', body, 'key-1');
    expect(second.statusCode).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json().data).toEqual(first.json().data);
    expect(second.json().request_id).toBe(second.headers['x-request-id']);
    expect(await appointments()).toBe(before + 1);
    // Key order in the body does not matter.
    const reordered = { data: body.data, appointment_type: body.appointment_type };
    expect((await post('/v1/appointments', reordered, 'key-1')).json().data.appointment_id).toBe(first.json().data.appointment_id);
  });

  it('the same key with another body is 409 naming the header', async () => {
    const res = await post('/v1/appointments', createBody(PL.ny, day[1]!.start_time), 'key-1');
    expect(res.statusCode).toBe(409);
    expect(res.json().errors[0].field).toBe('Idempotency-Key');
  });

  it('error answers are replayed too, and other POSTs (confirm, cancel) get the behaviour', async () => {
    const bad = createBody(PL.ny, '2020-01-01T10:00:00Z');
    expect((await post('/v1/appointments', bad, 'key-bad')).statusCode).toBe(400);
    const again = await post('/v1/appointments', bad, 'key-bad');
    expect(again.statusCode).toBe(400);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const id = (await post('/v1/appointments', createBody(PL.ny, day[2]!.start_time))).json().data.appointment_id;
    const c1 = await post('/v1/appointments/cancel', { appointment_id: id }, 'cancel-1');
    const c2 = await post('/v1/appointments/cancel', { appointment_id: id }, 'cancel-1');
    expect([c1.statusCode, c2.statusCode]).toEqual([200, 200]);
    expect(c2.headers['idempotent-replayed']).toBe('true');
    // Without the key the second cancel is a real second call: 409.
    expect((await post('/v1/appointments/cancel', { appointment_id: id })).statusCode).toBe(409);
  });

  it('keys are per developer: another developer with the same key is a new request', async () => {
    const other = await post('/v1/appointments', createBody(PL.ny, day[3]!.start_time), 'key-1', e.otherToken);
    expect(other.statusCode, other.body).toBe(200);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
  });

  it('expired keys (24 h) are forgotten; a bad key is 400', async () => {
    await e.t.db.updateTable('idempotency_keys').set({ expires_at: new Date(Date.now() - 1000) }).where('key', '=', 'key-1').where('developer_id', '=', e.dev.developer_id).execute();
    const body = createBody(PL.ny, day[5]!.start_time);
    const res = await post('/v1/appointments', body, 'key-1');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    const stored = await e.t.db.selectFrom('idempotency_keys').select(['expires_at', 'created_at']).where('key', '=', 'key-1').where('developer_id', '=', e.dev.developer_id).executeTakeFirstOrThrow();
    expect(new Date(stored.expires_at).getTime() - new Date(stored.created_at).getTime()).toBeGreaterThan(23.9 * 3600_000);
    expect((await post('/v1/appointments', body, 'x'.repeat(256))).statusCode).toBe(400);
  });

  it('parallel repeats with one key book once: the others replay or see 409 in progress', async () => {
    const base = await e.t.listen();
    const watched = fetchReportingStalls(e.t.app.server as Server); // a stall fails with where it stalled
    const body = JSON.stringify(createBody(PL.ny, day[6]!.start_time));
    const before = await appointments();
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        watched(`${base}/v1/appointments`, { method: 'POST', headers: { ...bearer(e.token), 'content-type': 'application/json', 'idempotency-key': 'parallel' }, body }).then((r) => r.status),
      ),
    );
    expect(results.every((s) => s === 200 || s === 409)).toBe(true);
    expect(results.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    expect(await appointments()).toBe(before + 1);
  });
});
