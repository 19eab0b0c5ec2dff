/**
 * `GET /authorize` stores nothing before the user acts (issue #16 §6; docs/auth.md, "The sign-in
 * pages"): showing the sign-in page any number of times writes no row; the forms carry the request
 * in a handle bound to the browser's cookie; the first form posted stores it, and a completed
 * request cannot be used again. A handle that was altered, has expired, belongs to another browser,
 * or names a client that no longer exists is refused with the expired-page answer.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestHandle, requestHandleKeys } from '../../src/auth/authorize/request-handle.js';
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
  /** Rows of every table of the test's schema, by table. */
  const everyTable = async (): Promise<Record<string, number>> => {
    const { rows: tables } = await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`.execute(t.db);
    const counts: Record<string, number> = {};
    for (const { name } of tables) counts[name] = Number((await sql<{ n: unknown }>`SELECT count(*) AS n FROM ${sql.table(name)}`.execute(t.db)).rows[0]!.n);
    return counts;
  };
  const rows = async () => Number((await t.db.selectFrom('authorization_requests').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const browser = (page: { headers: Record<string, unknown> }) => String([page.headers['set-cookie']].flat().find((c) => String(c).startsWith('cb_browser='))).split(';')[0]!;
  const signInPage = (handle: string, cookie: string) => t.app.inject({ url: `${base}/authorize/signin?request=${encodeURIComponent(handle)}`, headers: { cookie } });

  it('showing the sign-in page many times stores no row in any table', async () => {
    const before = await everyTable();
    expect(before.authorization_requests).toBe(0);
    for (let i = 0; i < 25; i++) {
      const page = await t.app.inject({ url: `${base}/authorize?${query()}` });
      expect(page.statusCode).toBe(200);
      expect(hiddenField(page.body, 'request')).toMatch(/^[\w-]+\.[\w-]+$/);
    }
    // The same browser again and again, too (its cookie is kept).
    const first = await t.app.inject({ url: `${base}/authorize?${query()}` });
    for (let i = 0; i < 10; i++) expect((await t.app.inject({ url: `${base}/authorize?${query()}`, headers: { cookie: browser(first) } })).statusCode).toBe(200);
    expect(await everyTable()).toEqual(before);
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

    // Whoever holds the cookie still cannot make or re-sign a handle: the key is the server's.
    const browserId = cookie.slice('cb_browser='.length);
    const later = Buffer.from(JSON.stringify({ q: { ...forged.q, scope: DEFAULT_USER_SCOPE, state: 'forged' }, t: Date.now() + 3600_000 })).toString('base64url');
    const resigned = `${later}.${createHmac('sha256', browserId).update(`authorize-request:${later}`).digest('base64url')}`;
    const refused = await signInPage(resigned, cookie);
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/expired or was opened in another browser/);
    const otherKek = requestHandle([randomBytes(32)], Object.fromEntries(query()), browserId);
    expect((await signInPage(otherKek, cookie)).statusCode).toBe(400);

    const keys = requestHandleKeys(t.config);
    expect((await signInPage(requestHandle(keys, Object.fromEntries(query()), browserId), cookie)).statusCode).toBe(200);
    const old = requestHandle(keys, Object.fromEntries(query()), browserId, Date.now() - AUTHORIZATION_REQUEST_TTL_MS - 1000);
    const expiredPage = await signInPage(old, cookie);
    expect(expiredPage.statusCode).toBe(400);
    expect(expiredPage.body).toMatch(/expired or was opened in another browser/);
    // A form posted with an expired or altered handle is refused the same way, and stores nothing.
    const before = await rows();
    for (const request of [old, altered]) {
      const posted = await t.app.inject({
        method: 'POST',
        url: `${base}/authorize/signin`,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ request, csrf_token: createHmac('sha256', browserId).update(`csrf:${request}`).digest('base64url'), email: login.email, password: login.password }).toString(),
      });
      expect(posted.statusCode).toBe(400);
      expect(posted.body).toMatch(/expired or was opened in another browser/);
    }
    expect(await rows()).toBe(before);

    const other = await t.app.inject({ url: `${base}/authorize?${query()}` });
    expect((await signInPage(handle, browser(other))).statusCode).toBe(400);
    const posted = await t.app.inject({
      method: 'POST',
      url: `${base}/authorize/signin`,
      headers: { cookie: browser(other), 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ request: handle, csrf_token: hiddenField(page.body, 'csrf_token'), email: login.email, password: login.password }).toString(),
    });
    expect(posted.statusCode).toBe(400);

    const gone = await newDeveloper(t, 'Soon removed');
    const q = query();
    q.set('client_id', gone.user_client_id);
    const shown = await t.app.inject({ url: `${base}/authorize?${q}` });
    expect(shown.statusCode).toBe(200);
    await t.db.updateTable('oauth_clients').set({ redirect_uris: [] }).where('client_id', '=', gone.user_client_id).execute();
    expect((await signInPage(hiddenField(shown.body, 'request'), browser(shown))).statusCode).toBe(400);
  });
});
