/**
 * Sign-in through the practice workspace client (docs/auth.md, "Practice accounts and sign-in"): the
 * whole real flow without a consent page, patients refused there, staff refused on a developer's app,
 * the same throttles as every sign-in, and no patient sign-up.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceClientId, workspaceRedirectUri } from '../../src/domain/practices/workspace-client.js';
import { createUser } from '../../src/domain/users/create-user.js';
import { type SchedulingEnv } from '../appointments/fixtures.js';
import { authPath, authorizeWithForms, bearer } from '../helpers/auth.js';
import { PRACTICE_A, openWorkspaceSignIn, postSignIn, practiceEnv, practiceMember } from '../helpers/practice.js';

let e: SchedulingEnv;
beforeAll(async () => {
  e = await practiceEnv();
}, 60_000);
afterAll(() => e?.close());

describe('the practice workspace client', () => {
  it('exists in the environment as a public client with the workspace redirect URI', async () => {
    const row = await e.t.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', workspaceClientId(e.t.config.appEnv)).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ kind: 'public', secret_hash: null, redirect_uris: [workspaceRedirectUri(e.t.config.publicBaseUrl)] });
    expect([...row.scopes].sort()).toEqual(['offline_access', 'practice.admin', 'practice.read', 'practice.write']);
  });

  it('staff sign in without a consent page: the sign-in form redirects straight back with a code; the token works on /practice/v1', async () => {
    const admin = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_admin' });
    const opened = await openWorkspaceSignIn(e.t, { scope: 'practice.read practice.admin offline_access' });
    expect(opened.page.body).toContain('Carebook practice workspace');
    expect(opened.page.body).not.toContain('Create an account');
    expect(opened.page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    const signIn = await postSignIn(e.t, opened, { email: admin.email, password: admin.password });
    expect(signIn.statusCode).toBe(303);
    const location = new URL(String(signIn.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(workspaceRedirectUri(e.t.config.publicBaseUrl));
    expect(location.searchParams.get('iss')).toBe(e.t.config.authUrl);
    const code = location.searchParams.get('code')!;
    const res = await e.t.app.inject({
      method: 'POST',
      url: `${authPath(e.t)}/oauth/token`,
      payload: { grant_type: 'authorization_code', client_id: workspaceClientId(e.t.config.appEnv), code, redirect_uri: opened.redirectUri, code_verifier: opened.verifier },
    });
    expect(res.statusCode).toBe(200);
    const tokens = res.json();
    expect(tokens.refresh_token).toBeTruthy();
    const me = await e.t.app.inject({ url: '/practice/v1/me', headers: bearer(tokens.access_token) });
    expect(me.statusCode).toBe(200);
    expect(me.json().data.scopes).toEqual(['practice.admin', 'practice.read']);
    // The refreshed token works too, and stops with the member's removal (family revoked).
    const refreshed = await e.t.app.inject({
      method: 'POST',
      url: `${authPath(e.t)}/oauth/token`,
      payload: { grant_type: 'refresh_token', client_id: workspaceClientId(e.t.config.appEnv), refresh_token: tokens.refresh_token },
    });
    expect(refreshed.statusCode).toBe(200);
    expect((await e.t.app.inject({ url: '/practice/v1/me', headers: bearer(refreshed.json().access_token) })).statusCode).toBe(200);
  });

  it('a wrong password is refused as on every sign-in (401 page), and no code is issued', async () => {
    const admin = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_admin' });
    const opened = await openWorkspaceSignIn(e.t);
    const res = await postSignIn(e.t, opened, { email: admin.email, password: 'wrong-password' });
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('The e-mail address or password is incorrect.');
  });

  it('throttles failed sign-ins per account like the developer apps\' sign-in (429 after 10)', async () => {
    const admin = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    const opened = await openWorkspaceSignIn(e.t);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await postSignIn(e.t, opened, { email: admin.email, password: `wrong-${i}` })).statusCode);
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
    // Even the right password is throttled now.
    expect((await postSignIn(e.t, opened, { email: admin.email, password: admin.password })).statusCode).toBe(429);
  });

  it('a patient signing in to the workspace gets a clear error on the page (403), no code', async () => {
    const email = `patient-${randomBytes(3).toString('hex')}@example.org`;
    await createUser(e.t.db, { env: e.t.config.appEnv, email, password: 'patient-pass-1', role: 'patient' });
    const opened = await openWorkspaceSignIn(e.t);
    const res = await postSignIn(e.t, opened, { email, password: 'patient-pass-1' });
    expect(res.statusCode).toBe(403);
    expect(res.headers.location).toBeUndefined();
    expect(res.body).toContain('This account cannot sign in to the Carebook practice workspace');
    expect(await e.t.db.selectFrom('authorization_codes').select('code_hash').where('client_id', '=', workspaceClientId(e.t.config.appEnv)).where('user_id', 'in', e.t.db.selectFrom('users').select('id').where('email', '=', email)).execute()).toEqual([]);
  });

  it('no patient sign-up through the workspace', async () => {
    const opened = await openWorkspaceSignIn(e.t);
    const res = await e.t.app.inject({ url: `${authPath(e.t)}/authorize/signup?request=${encodeURIComponent(opened.form.request)}`, headers: { cookie: opened.cookie } });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('by invitation only');
  });

  it('a staff member signing in to a developer\'s app gets the error on the page (403), no session, no code', async () => {
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    const err = await authorizeWithForms(e.t, e.dev, { email: staff.email, password: staff.password }, randomBytes(32).toString('base64url')).then(
      () => undefined,
      (x: Error) => x,
    );
    expect(err?.message).toBe('sign-in failed: 403');
    const codes = await e.t.db.selectFrom('authorization_codes').select('code_hash').where('user_id', '=', staff.userId).where('client_id', '=', e.dev.user_client_id).execute();
    expect(codes).toEqual([]);
  });

  it('a staff member\'s page shows the message that names the rule', async () => {
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    const opened = await openWorkspaceSignIn(e.t, { clientId: e.dev.user_client_id, redirectUri: 'http://127.0.0.1:9/callback', scope: 'external.appointment.read' });
    const res = await postSignIn(e.t, opened, { email: staff.email, password: staff.password });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('practice staff accounts sign in only to the Carebook practice workspace');
    expect(res.headers['set-cookie'] ?? []).not.toEqual(expect.arrayContaining([expect.stringMatching(/^cb_session=[^;]/)]));
  });

  it('a removed member is refused at sign-in with a clear message (403), no session and no code', async () => {
    const admin = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_admin' });
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    const del = await e.t.app.inject({ method: 'DELETE', url: `/practice/v1/staff/${staff.userId}`, headers: bearer(admin.token) });
    expect(del.statusCode).toBe(200);
    const codesOf = async () => (await e.t.db.selectFrom('authorization_codes').select('code_hash').where('user_id', '=', staff.userId).execute()).length;
    const codesBefore = await codesOf(); // the one practiceMember signed in with
    const opened = await openWorkspaceSignIn(e.t);
    const res = await postSignIn(e.t, opened, { email: staff.email, password: staff.password });
    expect(res.statusCode).toBe(403);
    expect(res.headers.location).toBeUndefined();
    expect(res.body).toContain('no longer a member of a practice');
    expect(res.headers['set-cookie'] ?? []).not.toEqual(expect.arrayContaining([expect.stringMatching(/^cb_session=[^;]/)]));
    expect(await codesOf()).toBe(codesBefore);
    // A wrong password is still only "incorrect": membership is told only to whoever knows the password.
    expect((await postSignIn(e.t, opened, { email: staff.email, password: 'wrong-password' })).statusCode).toBe(401);
  });
});
