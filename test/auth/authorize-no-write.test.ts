/**
 * `GET /authorize` stores nothing before the user acts (issue #16 §6; docs/auth.md, "The sign-in
 * pages"): showing the sign-in page any number of times writes no row; the forms carry the request
 * in a handle bound to the browser's cookie; the first form posted stores it, and a completed
 * request cannot be used again. A handle that was altered, has expired, belongs to another browser,
 * or names a client that no longer exists is refused with the expired-page answer.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestHandle } from '../../src/auth/authorize/request-handle.js';
import { AUTHORIZATION_REQUEST_TTL_MS } from '../../src/auth/lifetimes.js';
import { createUser } from '../../src/domain/users/create-user.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { authPath, authorizeWithForms, DEFAULT_USER_SCOPE, hiddenField } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';

describe(`GET /authorize writes nothing before the user acts (${engineName})`, () => {
  let t: TestApp;
  let creds: NewDeveloper;
  let base: string;
  const login = { email: 'no-write@example.org', password: 'correct horse battery' };
  beforeAll(async () => {
    t = await testApp();
    creds = await newDeveloper(t, 'No-write app');
    base = authPath(t);
    await createUser(t.db, { env: 'sandbox', email: login.email, password: login.password, role: 'patient' });
  });
  afterAll(async () => t?.close());

  const query = () =>
    new URLSearchParams({
      response_type: 'code',
      client_id: creds.user_client_id,
      redirect_uri: 'http://127.0.0.1:9/callback',
      scope: DEFAULT_USER_SCOPE,
      code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
      code_challenge_method: 'S256',
      state: 'st-1',
    });
  const rows = async () => Number((await t.db.selectFrom('authorization_requests').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const browser = (page: { headers: Record<string, unknown> }) => String([page.headers['set-cookie']].flat().find((c) => String(c).startsWith('cb_browser='))).split(';')[0]!;
  const signInPage = (handle: string, cookie: string) => t.app.inject({ url: `${base}/authorize/signin?request=${encodeURIComponent(handle)}`, headers: { cookie } });

  it('showing the sign-in page many times stores no row', async () => {
    const before = await rows();
    for (let i = 0; i < 25; i++) {
      const page = await t.app.inject({ url: `${base}/authorize?${query()}` });
      expect(page.statusCode).toBe(200);
      expect(hiddenField(page.body, 'request')).toMatch(/^[\w-]+\.[\w-]+$/);
    }
    expect(await rows()).toBe(before);
  });

  it('the code flow still works; the request is stored when the user acts and cannot be completed twice', async () => {
    const before = await rows();
    const verifier = randomBytes(32).toString('base64url');
    const { code, redirectUri, state } = await authorizeWithForms(t, creds, { ...login, state: 'st-flow' }, verifier);
    expect(state).toBe('st-flow');
    expect(await rows()).toBe(before + 1);
    const completed = await t.db.selectFrom('authorization_requests').select('completed_at').where('completed_at', 'is not', null).execute();
    expect(completed.length).toBeGreaterThanOrEqual(1);
    const token = await t.app.inject({
      method: 'POST',
      url: `${base}/oauth/token`,
      payload: { grant_type: 'authorization_code', client_id: creds.user_client_id, code, redirect_uri: redirectUri, code_verifier: verifier },
    });
    expect(token.statusCode, token.body).toBe(200);
  });

  it('a completed request cannot be shown or posted again', async () => {
    const page = await t.app.inject({ url: `${base}/authorize?${query()}` });
    const cookie = browser(page);
    const form = { request: hiddenField(page.body, 'request'), csrf_token: hiddenField(page.body, 'csrf_token') };
    const post = (path: string, extra: Record<string, string>, jar = cookie) =>
      t.app.inject({ method: 'POST', url: `${base}${path}`, headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ ...form, ...extra }).toString() });
    const signedIn = await post('/authorize/signin', { email: login.email, password: login.password });
    expect(signedIn.statusCode).toBe(303);
    const session = String([signedIn.headers['set-cookie']].flat().find((c) => String(c).startsWith('cb_session='))).split(';')[0]!;
    const allowed = await post('/authorize/decision', { decision: 'allow' }, `${cookie}; ${session}`);
    expect(allowed.statusCode).toBe(303);
    const again = await post('/authorize/decision', { decision: 'allow' }, `${cookie}; ${session}`);
    expect(again.statusCode).toBe(400);
    expect(again.body).toMatch(/expired/);
    expect((await signInPage(form.request, cookie)).statusCode).toBe(400);
  });

  it('refuses a handle that was altered, has expired, is another browser\'s, or names a removed client', async () => {
    const page = await t.app.inject({ url: `${base}/authorize?${query()}` });
    const cookie = browser(page);
    const handle = hiddenField(page.body, 'request');
    expect((await signInPage(handle, cookie)).statusCode).toBe(200);

    const [payload, mac] = handle.split('.');
    const forged = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { q: Record<string, string>; t: number };
    forged.q.scope = `${forged.q.scope} offline_access`;
    const altered = `${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${mac}`;
    expect((await signInPage(altered, cookie)).statusCode).toBe(400);

    const browserId = cookie.slice('cb_browser='.length);
    const old = requestHandle(Object.fromEntries(query()), browserId, Date.now() - AUTHORIZATION_REQUEST_TTL_MS - 1000);
    expect((await signInPage(old, cookie)).statusCode).toBe(400);

    const other = await t.app.inject({ url: `${base}/authorize?${query()}` });
    expect((await signInPage(handle, browser(other))).statusCode).toBe(400);

    const gone = await newDeveloper(t, 'Soon removed');
    const q = query();
    q.set('client_id', gone.user_client_id);
    const shown = await t.app.inject({ url: `${base}/authorize?${q}` });
    expect(shown.statusCode).toBe(200);
    await t.db.updateTable('oauth_clients').set({ redirect_uris: [] }).where('client_id', '=', gone.user_client_id).execute();
    expect((await signInPage(hiddenField(shown.body, 'request'), browser(shown))).statusCode).toBe(400);
  });
});
