/**
 * The developer's request log (docs/api/request-log.md): every answered call of a developer's
 * credential is recorded (method, path without query values, status, latency, request_id), the
 * error body only for refused calls, never a request body; read newest first through the admin API,
 * searchable by request_id, filtered by status, paged; one developer never sees another's calls;
 * pruning keeps 7 days and the newest entries per developer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { pruneRequestLog } from '../../src/domain/request-log/prune.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { scaled } from '../helpers/scale.js';

const admin = { authorization: 'Bearer test-admin-token-0123456789abcdefgh' };

describe(`request log (${engineName})`, () => {
  let t: TestApp;
  let a: NewDeveloper;
  let b: NewDeveloper;
  let tokenA: string;
  let tokenB: string;

  type Entry = { request_id: string; method: string; path: string; status: number; latency_ms: number; client_id: string; error: Record<string, unknown> | null };
  const read = async (developerId: string, query = ''): Promise<{ requests: Entry[]; next_cursor: string | null }> => {
    const res = await t.app.inject({ url: `/admin/v1/developers/${developerId}/request-log${query}`, headers: admin });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };
  /** Waits until the log of `developerId` holds `requestId` (entries are written in batches). */
  const logged = async (developerId: string, requestId: string): Promise<Entry> => {
    const deadline = Date.now() + scaled(5000);
    for (;;) {
      const [hit] = (await read(developerId, `?request_id=${requestId}`)).requests;
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`request ${requestId} not logged`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  beforeAll(async () => {
    t = await testApp();
    a = await newDeveloper(t, 'Logged A');
    b = await newDeveloper(t, 'Logged B');
    tokenA = await clientToken(t, a);
    tokenB = await clientToken(t, b);
  });
  afterAll(async () => t.close());

  it('records a successful call without its body or query values', async () => {
    const res = await t.app.inject({ url: '/v1/appointments?developer_patient_id=PAT-SECRET-4', headers: bearer(tokenA) });
    expect(res.statusCode).toBe(200);
    const entry = await logged(a.developer_id, String(res.headers['x-request-id']));
    expect(entry).toMatchObject({ method: 'GET', path: '/v1/appointments?developer_patient_id', status: 200, client_id: a.client_id, error: null });
    expect(entry.latency_ms).toBeGreaterThan(0);
    expect(JSON.stringify(entry)).not.toContain('PAT-SECRET-4');
  });

  it('records a refused call with its error body, and never the request body', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(tokenA), payload: { patient: { first_name: 'Zebediah' }, start_time: 'soon' } });
    expect(res.statusCode).toBe(400);
    const entry = await logged(a.developer_id, String(res.headers['x-request-id']));
    expect(entry.status).toBe(400);
    expect(entry.error).toEqual(res.json());
    expect(JSON.stringify(entry)).not.toContain('Zebediah');
  });

  it('records a call refused for its scope (the token was good, the developer is known)', async () => {
    const narrow = await clientToken(t, a, 'external.schedulable_entity.read');
    const res = await t.app.inject({ url: '/v1/appointments', headers: bearer(narrow) });
    expect(res.statusCode).toBe(403);
    expect((await logged(a.developer_id, String(res.headers['x-request-id']))).error).toMatchObject({ error_type: res.json().error_type });
  });

  it('keeps each developer to their own calls, and calls without a valid token out', async () => {
    const mine = await t.app.inject({ url: '/v1/appointments', headers: bearer(tokenB) });
    await logged(b.developer_id, String(mine.headers['x-request-id']));
    const anonymous = await t.app.inject({ url: '/v1/appointments' });
    expect(anonymous.statusCode).toBe(401);
    await new Promise((r) => setTimeout(r, 400));
    const ofA = (await read(a.developer_id, '?page_size=500')).requests.map((e) => e.request_id);
    const ofB = (await read(b.developer_id, '?page_size=500')).requests.map((e) => e.request_id);
    expect(ofA).not.toContain(mine.headers['x-request-id']);
    expect(ofB).toEqual([mine.headers['x-request-id']]);
    expect([...ofA, ...ofB]).not.toContain(anonymous.headers['x-request-id']);
  });

  it('filters by status and pages newest first', async () => {
    for (let i = 0; i < 5; i++) await t.app.inject({ url: `/v1/appointments/ap_missing${i}`, headers: bearer(tokenB) });
    const last = await t.app.inject({ url: '/v1/appointments', headers: bearer(tokenB) });
    await logged(b.developer_id, String(last.headers['x-request-id']));
    const errors = (await read(b.developer_id, '?status=error')).requests;
    expect(errors.length).toBeGreaterThanOrEqual(5);
    expect(errors.every((e) => e.status >= 400)).toBe(true);
    expect((await read(b.developer_id, '?status=404')).requests.every((e) => e.status === 404)).toBe(true);
    expect((await read(b.developer_id, '?status=success')).requests.every((e) => e.status < 400)).toBe(true);
    const first = await read(b.developer_id, '?page_size=4');
    expect(first.requests[0]!.request_id).toBe(last.headers['x-request-id']);
    const second = await read(b.developer_id, `?page_size=4&cursor=${first.next_cursor}`);
    const all = (await read(b.developer_id, '?page_size=500')).requests.map((e) => e.request_id);
    expect([...first.requests, ...second.requests].map((e) => e.request_id)).toEqual(all.slice(0, first.requests.length + second.requests.length));
  });

  it('names a bad status or cursor, and needs the admin token', async () => {
    const bad = await t.app.inject({ url: `/admin/v1/developers/${a.developer_id}/request-log?status=oops&cursor=zz`, headers: admin });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: { field: string }) => e.field).sort()).toEqual(['cursor', 'status']);
    expect((await t.app.inject({ url: `/admin/v1/developers/${a.developer_id}/request-log` })).statusCode).toBe(401);
  });

  it('prunes entries older than 7 days and all but the newest per developer', async () => {
    const row = (developer: string, daysAgo: number, i: number) => ({
      env: 'sandbox' as const, developer_id: developer, client_id: 'cl_x', at: new Date(Date.now() - daysAgo * 86_400_000 - i * 1000),
      method: 'GET', path: '/v1/x', status: 200, latency_ms: 1, request_id: `req_prune_${developer}_${daysAgo}_${i}`, error: null,
    });
    await t.db.insertInto('request_log').values([
      ...Array.from({ length: 12 }, (_, i) => row('dv_many', 0, i)),
      ...Array.from({ length: 3 }, (_, i) => row('dv_old', 8, i)),
      row('dv_old', 6, 0),
    ]).execute();
    const gone = await pruneRequestLog(t.db, { maxPerDeveloper: 10 });
    expect(gone).toBeGreaterThanOrEqual(5);
    const left = await t.db.selectFrom('request_log').select(['developer_id', 'request_id']).where('developer_id', 'in', ['dv_many', 'dv_old']).orderBy('request_id').execute();
    expect(left.filter((r) => r.developer_id === 'dv_many').map((r) => r.request_id).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `req_prune_dv_many_0_${i}`).sort());
    expect(left.filter((r) => r.developer_id === 'dv_old').map((r) => r.request_id)).toEqual(['req_prune_dv_old_6_0']);
  });
});
