/**
 * Invitations and practice admins (docs/auth.md, "Practice accounts and sign-in"): the invitation page
 * (CSRF, Origin, CSP, single use even when raced), the admin API `POST /admin/v1/practices/{id}/admins`
 * and `carebook practice admin create`.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SchedulingEnv } from '../appointments/fixtures.js';
import { bearer } from '../helpers/auth.js';
import { PRACTICE_A, PRACTICE_B, practiceEnv, practiceMember, workspaceToken, type PracticeLogin } from '../helpers/practice.js';
import { scaled } from '../helpers/scale.js';

const ADMIN = { authorization: 'Bearer test-admin-token-0123456789abcdefgh' };
let e: SchedulingEnv;
let adminA: PracticeLogin;
beforeAll(async () => {
  e = await practiceEnv();
  adminA = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_admin' });
}, 60_000);
afterAll(() => e?.close());

let n = 0;
async function invitationPath(role: 'practice_staff' | 'practice_admin' = 'practice_staff'): Promise<{ path: string; email: string }> {
  const email = `invited-${++n}-${process.pid}@practice.test`;
  const res = await e.t.app.inject({ method: 'POST', url: '/practice/v1/staff', headers: bearer(adminA.token), payload: { email, role } });
  expect(res.statusCode).toBe(201);
  return { path: new URL(res.json().data.invitation_url).pathname, email };
}

/** Opens the page: its cookie and CSRF token. */
async function open(path: string) {
  const page = await e.t.app.inject({ url: path });
  expect(page.statusCode).toBe(200);
  const cookie = [page.headers['set-cookie'] ?? []].flat().map((c) => c.split(';')[0]).join('; ');
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!;
  return { page, cookie, csrf };
}

const post = (path: string, cookie: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  e.t.app.inject({ method: 'POST', url: path, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: new URLSearchParams(fields).toString() });

describe('the invitation page', () => {
  it('shows the practice and role with the sign-in pages\' CSP, sets the password, and the new member signs in', async () => {
    const { path, email } = await invitationPath();
    const { page, cookie, csrf } = await open(path);
    expect(page.body).toContain('Join Test practice');
    expect(page.body).toContain(email);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'.*form-action 'self'.*frame-ancestors 'none'/);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(String(page.headers['set-cookie'])).toMatch(/cb_invite=.*HttpOnly.*SameSite=Strict/i);
    const done = await post(path, cookie, { csrf_token: csrf, password: 'a fine password', password_confirm: 'a fine password' }, { origin: new URL(e.t.config.publicBaseUrl).origin });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Your account is ready');
    const token = await workspaceToken(e.t, { email, password: 'a fine password' });
    const me = await e.t.app.inject({ url: '/practice/v1/me', headers: bearer(token) });
    expect(me.json().data).toMatchObject({ email, role: 'practice_staff', practice: { id: PRACTICE_A } });
    // Used: the link is dead.
    expect((await e.t.app.inject({ url: path })).statusCode).toBe(404);
    expect((await post(path, cookie, { csrf_token: csrf, password: 'another password', password_confirm: 'another password' })).statusCode).toBe(404);
  });

  it('refuses a post without the CSRF token, with a wrong one, without the cookie, or from another origin (403); the invitation stays usable', async () => {
    const { path } = await invitationPath();
    const { cookie, csrf } = await open(path);
    const fields = { password: 'a fine password', password_confirm: 'a fine password' };
    expect((await post(path, cookie, fields)).statusCode).toBe(403);
    expect((await post(path, cookie, { ...fields, csrf_token: `${csrf.slice(0, -2)}xx` })).statusCode).toBe(403);
    expect((await post(path, '', { ...fields, csrf_token: csrf })).statusCode).toBe(403);
    const foreign = await post(path, cookie, { ...fields, csrf_token: csrf }, { origin: 'https://evil.example' });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.body).toContain('another site');
    expect((await e.t.app.inject({ url: path })).statusCode).toBe(200);
  });

  it('names a short or mismatched password and keeps the invitation usable', async () => {
    const { path } = await invitationPath();
    const { cookie, csrf } = await open(path);
    const short = await post(path, cookie, { csrf_token: csrf, password: 'short', password_confirm: 'short' });
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('at least 8 characters');
    expect(short.body).toContain('aria-invalid="true"');
    const differ = await post(path, cookie, { csrf_token: csrf, password: 'a fine password', password_confirm: 'another one!' });
    expect(differ.statusCode).toBe(400);
    expect(differ.body).toContain('The two passwords differ.');
    expect((await post(path, cookie, { csrf_token: csrf, password: 'a fine password', password_confirm: 'a fine password' })).statusCode).toBe(200);
  });

  it('an unknown token is a 404 page', async () => {
    const res = await e.t.app.inject({ url: '/practice/invitations/not-a-real-token' });
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain('unknown, was already used, or has expired');
  });

  it('an expired invitation is refused', async () => {
    const { path } = await invitationPath();
    await e.t.db.updateTable('practice_invitations').set({ expires_at: new Date(Date.now() - 1000) }).where('accepted_at', 'is', null).execute();
    expect((await e.t.app.inject({ url: path })).statusCode).toBe(404);
  });

  it('single use when raced: of two parallel acceptances exactly one succeeds, one login and one membership', async () => {
    for (let round = 0; round < 3; round++) {
      const { path, email } = await invitationPath();
      const a = await open(path);
      const b = await open(path);
      const results = await Promise.all([
        post(path, a.cookie, { csrf_token: a.csrf, password: 'first password', password_confirm: 'first password' }),
        post(path, b.cookie, { csrf_token: b.csrf, password: 'second password', password_confirm: 'second password' }),
      ]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 404]);
      const users = await e.t.db.selectFrom('users').innerJoin('practice_members', 'practice_members.user_id', 'users.id').select('users.id').where('users.email', '=', email).execute();
      expect(users).toHaveLength(1);
      const winner = results[0]!.statusCode === 200 ? 'first password' : 'second password';
      await expect(workspaceToken(e.t, { email, password: winner })).resolves.toBeTruthy();
    }
  });
});

describe('POST /admin/v1/practices/{practice_id}/admins', () => {
  it('with a password: the admin signs in at once', async () => {
    const res = await e.t.app.inject({ method: 'POST', url: `/admin/v1/practices/${PRACTICE_B}/admins`, headers: ADMIN, payload: { email: 'op-admin-b@practice.test', password: 'operator chosen' } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ user_id: expect.stringMatching(/^us_/), email: 'op-admin-b@practice.test', practice_id: PRACTICE_B, role: 'practice_admin', invitation_url: null });
    const token = await workspaceToken(e.t, { email: 'op-admin-b@practice.test', password: 'operator chosen' });
    expect((await e.t.app.inject({ url: '/practice/v1/staff', headers: bearer(token) })).statusCode).toBe(200);
  });

  it('without a password: a one-time invitation link that sets the admin\'s password', async () => {
    const res = await e.t.app.inject({ method: 'POST', url: `/admin/v1/practices/${PRACTICE_B}/admins`, headers: ADMIN, payload: { email: 'op-admin-b2@practice.test' } });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.invitation_url).toMatch(/\/practice\/invitations\//);
    const path = new URL(body.invitation_url).pathname;
    const { cookie, csrf } = await open(path);
    expect((await post(path, cookie, { csrf_token: csrf, password: 'admin password', password_confirm: 'admin password' })).statusCode).toBe(200);
    const token = await workspaceToken(e.t, { email: 'op-admin-b2@practice.test', password: 'admin password' });
    const me = (await e.t.app.inject({ url: '/practice/v1/me', headers: bearer(token) })).json().data;
    expect(me).toMatchObject({ user_id: body.user_id, role: 'practice_admin', practice: { id: PRACTICE_B } });
  });

  it('404 for a practice not in the directory; 400 for a taken or bad e-mail; 401 without the admin token', async () => {
    const missing = await e.t.app.inject({ method: 'POST', url: '/admin/v1/practices/pt_nope/admins', headers: ADMIN, payload: { email: 'x1@practice.test' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().errors[0].field).toBe('practice_id');
    const taken = await e.t.app.inject({ method: 'POST', url: `/admin/v1/practices/${PRACTICE_A}/admins`, headers: ADMIN, payload: { email: adminA.email } });
    expect(taken.statusCode).toBe(400);
    expect(taken.json().errors).toEqual([{ field: 'email', message: 'a user with this e-mail already exists' }]);
    const bad = await e.t.app.inject({ method: 'POST', url: `/admin/v1/practices/${PRACTICE_A}/admins`, headers: ADMIN, payload: { email: 'nope', password: 'short' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((x: { field: string }) => x.field).sort()).toEqual(['email', 'password']);
    const noAuth = await e.t.app.inject({ method: 'POST', url: `/admin/v1/practices/${PRACTICE_A}/admins`, payload: { email: 'x2@practice.test' } });
    expect(noAuth.statusCode).toBe(401);
  });
});

describe('carebook practice admin create', () => {
  it('through a running service: prints the one-time invitation URL, which works', async () => {
    const url = await e.t.listen();
    const bin = join(import.meta.dirname, '../../bin/carebook.mjs');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [bin, '--url', url, '--admin-token', 'test-admin-token-0123456789abcdefgh', 'practice', 'admin', 'create', '--practice', PRACTICE_A, '--email', 'cli-admin@practice.test'],
      { env: { PATH: process.env.PATH! }, timeout: scaled(60_000) },
    );
    expect(stdout).toMatch(/^user_id us_\S+ \(practice_admin of pt_t\)$/m);
    const link = /^invitation_url (\S+)$/m.exec(stdout)?.[1];
    expect(link).toMatch(/\/practice\/invitations\//);
    expect((await e.t.app.inject({ url: new URL(link!).pathname })).statusCode).toBe(200);
  }, scaled(90_000));
});
