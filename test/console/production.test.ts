/**
 * Production access (docs/console.md, "Production"; docs/api/admin.md#production-requests): the
 * console account asks, the operator lists and grants through the admin API or
 * `carebook developer grant-production`; the production developer is owned by the same account.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SchedulingEnv } from '../appointments/fixtures.js';
import { bearer } from '../helpers/auth.js';
import { newConsoleAccount, type ConsoleLogin } from '../helpers/console.js';
import { practiceEnv } from '../helpers/practice.js';
import { scaled } from '../helpers/scale.js';

const ADMIN = { authorization: 'Bearer test-admin-token-0123456789abcdefgh' };
let e: SchedulingEnv;
let a: ConsoleLogin;
let b: ConsoleLogin;
beforeAll(async () => {
  e = await practiceEnv();
  a = await newConsoleAccount(e.t, '10.5.0.1');
  b = await newConsoleAccount(e.t, '10.5.0.2');
}, 120_000);
afterAll(() => e?.close());

const ask = (login: ConsoleLogin, payload: object = { company: 'Example Health', use_case: 'Booking for members' }) =>
  e.t.app.inject({ method: 'POST', url: '/console/v1/production-request', headers: bearer(login.token), payload });

describe('production requests', () => {
  it('400 names the missing fields', async () => {
    const res = await ask(a, {});
    expect(res.statusCode).toBe(400);
    expect((res.json().errors as { field: string }[]).map((x) => x.field).sort()).toEqual(['company', 'use_case']);
  });

  it('a request is pending once (409 for a second), shows in /me and in the operator\'s list; the admin API grants it', async () => {
    const res = await ask(a);
    expect(res.statusCode, res.body).toBe(201);
    const request = res.json().data;
    expect(request).toMatchObject({ status: 'pending', sandbox_developer_id: a.developerId, email: a.email, company: 'Example Health' });
    expect((await ask(a)).statusCode).toBe(409);
    const me = (await e.t.app.inject({ url: '/console/v1/me', headers: bearer(a.token) })).json().data;
    expect(me.production).toMatchObject({ status: 'pending', request_id: request.id });

    const list = await e.t.app.inject({ url: '/admin/v1/production-requests?status=pending', headers: ADMIN });
    expect(list.statusCode).toBe(200);
    expect((list.json().data as { id: string }[]).map((r) => r.id)).toContain(request.id);
    expect((await e.t.app.inject({ url: '/admin/v1/production-requests' })).statusCode).toBe(401);

    const granted = await e.t.app.inject({ method: 'POST', url: `/admin/v1/production-requests/${request.id}/grant`, headers: ADMIN });
    expect(granted.statusCode, granted.body).toBe(200);
    const g = granted.json().data;
    expect(g).toMatchObject({ status: 'granted', id: request.id });
    expect(g.production_developer_id).toMatch(/^dv_/);
    expect(JSON.stringify(g)).not.toContain('client_secret');
    // Decided once.
    expect((await e.t.app.inject({ method: 'POST', url: `/admin/v1/production-requests/${request.id}/grant`, headers: ADMIN })).statusCode).toBe(409);
    expect((await e.t.app.inject({ method: 'POST', url: '/admin/v1/production-requests/prq_nope/grant', headers: ADMIN })).statusCode).toBe(404);

    // The account owns the production developer; its app's secret is shown once, in the console.
    const after = (await e.t.app.inject({ url: '/console/v1/me', headers: bearer(a.token) })).json().data;
    expect(after.production.status).toBe('granted');
    expect(after.developers.map((d: { env: string }) => d.env)).toEqual(['sandbox', 'production']);
    const app = await e.t.app.inject({ url: `/console/v1/apps/${g.app_id}`, headers: bearer(a.token) });
    expect(app.statusCode).toBe(200);
    expect(app.json().data.env).toBe('production');
    expect(app.json().data.clients.find((c: { kind: string }) => c.kind === 'machine').client_secret).toBeTruthy();
    // Production redirect URIs are https only (loopback excepted).
    const http = await e.t.app.inject({ method: 'PUT', url: `/console/v1/apps/${g.app_id}/redirect_uris`, headers: bearer(a.token), payload: { redirect_uris: ['http://app.example.org/cb', 'http://127.0.0.1:9/cb'] } });
    expect(http.statusCode).toBe(400);
    expect(http.json().errors.map((x: { field: string }) => x.field)).toEqual(['redirect_uris[0]']);
    // Another account sees nothing of it.
    expect((await e.t.app.inject({ url: `/console/v1/apps/${g.app_id}`, headers: bearer(b.token) })).statusCode).toBe(404);
    // And the account cannot ask again.
    expect((await ask(a)).statusCode).toBe(409);
  });

  it('carebook developer grant-production ID grants through a running service', async () => {
    const res = await ask(b, { company: 'CLI Health', use_case: 'Tests' });
    expect(res.statusCode).toBe(201);
    const id = res.json().data.id as string;
    const url = await e.t.listen();
    const bin = join(import.meta.dirname, '../../bin/carebook.mjs');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [bin, '--url', url, '--admin-token', 'test-admin-token-0123456789abcdefgh', 'developer', 'grant-production', id],
      { env: { PATH: process.env.PATH! }, timeout: scaled(60_000) },
    );
    expect(stdout).toContain(`request ${id} granted to ${b.email}`);
    const row = await e.t.db.selectFrom('production_requests').select(['status', 'production_developer_id']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.status).toBe('granted');
    const owner = await e.t.db.selectFrom('developer_members').select('user_id').where('developer_id', '=', row.production_developer_id!).executeTakeFirstOrThrow();
    expect(owner.user_id).toBe(b.userId);
  }, scaled(90_000));

  it('the operator refuses with a reason the account reads; the account may ask again; a decided request is not decided twice', async () => {
    const c = await newConsoleAccount(e.t, '10.5.0.3');
    const id = (await ask(c, { company: 'Refused Health', use_case: 'Not yet' })).json().data.id as string;
    const refuse = (body: object, rid = id, headers: Record<string, string> = ADMIN) =>
      e.t.app.inject({ method: 'POST', url: `/admin/v1/production-requests/${rid}/refuse`, headers, payload: body });
    expect((await refuse({ reason: 'x' }, id, {})).statusCode).toBe(401);
    expect((await e.t.app.inject({ method: 'POST', url: `/admin/v1/production-requests/${id}/refuse`, headers: bearer(c.token), payload: { reason: 'x' } })).statusCode).toBe(401);
    for (const body of [{}, { reason: '' }, { reason: '   ' }, { reason: 'x'.repeat(1001) }]) {
      const bad = await refuse(body);
      expect(bad.statusCode, JSON.stringify(body)).toBe(400);
      expect(bad.json().errors.map((x: { field: string }) => x.field)).toEqual(['reason']);
    }
    expect((await refuse({ reason: 'x' }, 'prq_nope')).statusCode).toBe(404);

    const refused = await refuse({ reason: '  Tell us which members will book.  ' });
    expect(refused.statusCode, refused.body).toBe(200);
    expect(refused.json().data).toMatchObject({ id, status: 'refused', refusal_reason: 'Tell us which members will book.', production_developer_id: null });
    expect(refused.json().data.decided_at).toEqual(expect.any(String));
    const me = (await e.t.app.inject({ url: '/console/v1/me', headers: bearer(c.token) })).json().data;
    expect(me.production).toMatchObject({ status: 'refused', request_id: id, refusal_reason: 'Tell us which members will book.', console_url: null });
    // Decided once: neither a second refusal nor a grant.
    expect((await refuse({ reason: 'again' })).statusCode).toBe(409);
    expect((await e.t.app.inject({ method: 'POST', url: `/admin/v1/production-requests/${id}/grant`, headers: ADMIN })).statusCode).toBe(409);
    expect(await e.t.db.selectFrom('developers').select('id').where('env', '=', 'production').where('name', '=', 'Refused Health').execute()).toEqual([]);
    // The account asks again, and this one is granted.
    const again = await ask(c, { company: 'Refused Health', use_case: 'Booking for 40,000 members of our plan' });
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json().data).toMatchObject({ status: 'pending', refusal_reason: null });
    const listed = (await e.t.app.inject({ url: '/admin/v1/production-requests?status=refused', headers: ADMIN })).json().data as { id: string; refusal_reason: string }[];
    expect(listed.find((r) => r.id === id)?.refusal_reason).toBe('Tell us which members will book.');
  });

  it('carebook developer refuse-production ID --reason refuses through a running service', async () => {
    const c = await newConsoleAccount(e.t, '10.5.0.4');
    const asked = await ask(c, { company: 'CLI Refused', use_case: 'Tests' });
    expect(asked.statusCode, asked.body).toBe(201);
    const id = asked.json().data.id as string;
    const url = await e.t.listen();
    const bin = join(import.meta.dirname, '../../bin/carebook.mjs');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [bin, '--url', url, '--admin-token', 'test-admin-token-0123456789abcdefgh', 'developer', 'refuse-production', id, '--reason', 'Incomplete use case'],
      { env: { PATH: process.env.PATH! }, timeout: scaled(60_000) },
    );
    expect(stdout).toContain(`request ${id} of ${c.email} refused`);
    const row = await e.t.db.selectFrom('production_requests').select(['status', 'refusal_reason']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'refused', refusal_reason: 'Incomplete use case' });
  }, scaled(90_000));

  it('asking, refused, asking again, eight times in a row: every ask is recorded (PostgreSQL plans a prepared statement generically from its sixth run)', async () => {
    const c = await newConsoleAccount(e.t, '10.5.0.5');
    for (let i = 0; i < 8; i++) {
      const asked = await ask(c, { company: `Round ${i}`, use_case: 'Tests' });
      expect(asked.statusCode, `ask ${i}: ${asked.body}`).toBe(201);
      expect((await ask(c, { company: `Round ${i}`, use_case: 'Tests' })).statusCode).toBe(409);
      const refused = await e.t.app.inject({ method: 'POST', url: `/admin/v1/production-requests/${asked.json().data.id}/refuse`, headers: ADMIN, payload: { reason: `no ${i}` } });
      expect(refused.statusCode).toBe(200);
    }
  });
});
