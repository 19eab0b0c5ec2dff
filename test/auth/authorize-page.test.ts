/**
 * `GET {auth_url}/authorize` and its forms without a browser: validation order (never redirect to
 * an unregistered URI), CSRF, cookies, security headers, escaping, sign-up, rate limiting, sessions.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { createUser } from '../../src/domain/users/create-user.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { hiddenField } from '../helpers/auth.js';

const REDIRECT = 'http://127.0.0.1:9/callback';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('the authorize endpoint and sign-in pages', () => {
  let t: TestApp;
  let dev: NewDeveloper;
  beforeAll(async () => {
    t = await testApp();
    dev = await newDeveloper(t, 'Acme <Health> & "Co"', [REDIRECT]);
    await createUser(t.db, { env: 'sandbox', email: 'page@example.com', password: 'page-password-1', role: 'patient' });
  });
  afterAll(async () => t.close());

  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
  const query = (over: Record<string, string | undefined> = {}) => {
    const q: Record<string, string> = {};
    const all = { response_type: 'code', client_id: dev.user_client_id, redirect_uri: REDIRECT, scope: 'external.appointment.read', code_challenge: challenge, code_challenge_method: 'S256', state: 'st-1', ...over };
    for (const [k, v] of Object.entries(all)) if (v !== undefined) q[k] = v;
    return new URLSearchParams(q).toString();
  };
  const authorize = (over: Record<string, string | undefined> = {}, cookie?: string) =>
    t.app.inject({ url: `/auth/authorize?${query(over)}`, headers: cookie ? { cookie } : {} });
  const cookieOf = (res: { headers: Record<string, unknown> }) =>
    [res.headers['set-cookie'] ?? []].flat().map((c) => String(c).split(';')[0]).join('; ');

  /** Opens the sign-in page; returns the form fields and the browser cookie. */
  async function open(over: Record<string, string | undefined> = {}, cookie?: string) {
    const page = await authorize(over, cookie);
    expect(page.statusCode).toBe(200);
    return { page, cookie: cookie ?? cookieOf(page), request: hiddenField(page.body, 'request'), csrf_token: hiddenField(page.body, 'csrf_token') };
  }
  const post = (path: string, cookie: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: `/auth/authorize/${path}`, headers: { ...FORM, cookie, ...headers }, payload: new URLSearchParams(body).toString() });

  it('shows an error page, never a redirect, for an unknown client or an unregistered redirect URI', async () => {
    for (const over of [{ client_id: 'uc_nobody' }, { client_id: dev.client_id }, { redirect_uri: 'https://evil.example/cb' }, { redirect_uri: `${REDIRECT}/x` }, { redirect_uri: undefined }, { client_id: undefined }]) {
      const res = await authorize(over);
      expect(res.statusCode).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('We could not continue your sign-in');
    }
  });

  it('redirects other request errors to the client with error, error_description and state', async () => {
    const cases: [Record<string, string | undefined>, string][] = [
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ code_challenge: undefined }, 'invalid_request'],
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge_method: undefined }, 'invalid_request'],
      [{ code_challenge: 'short' }, 'invalid_request'],
      [{ scope: 'external.calendar.write' }, 'invalid_scope'],
      [{ audience: 'DeveloperApiPatient' }, 'invalid_request'],
      [{ anonymous_token: 'not-a-token' }, 'invalid_request'],
    ];
    for (const [over, error] of cases) {
      const res = await authorize(over);
      expect(res.statusCode, JSON.stringify(over)).toBe(303);
      const loc = new URL(String(res.headers.location));
      expect(`${loc.origin}${loc.pathname}`).toBe(REDIRECT);
      expect(loc.searchParams.get('error')).toBe(error);
      expect(loc.searchParams.get('error_description')).toEqual(expect.any(String));
      expect(loc.searchParams.get('state')).toBe('st-1');
    }
    const repeated = await t.app.inject({ url: `/auth/authorize?${query()}&scope=offline_access` });
    expect(new URL(String(repeated.headers.location)).searchParams.get('error')).toBe('invalid_request');
  });

  it('serves the page with a strict CSP, no framing, no caching and HttpOnly SameSite=Lax cookies; everything is escaped', async () => {
    const hint = '"><script>alert(1)</script>@x.example';
    const { page } = await open({ login_hint: hint });
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'; style-src 'nonce-[^']+'; .*form-action 'self' http:\/\/127\.0\.0\.1:9; frame-ancestors 'none'/);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['cache-control']).toBe('no-store');
    const cookie = String([page.headers['set-cookie']].flat()[0]);
    expect(cookie).toMatch(/^cb_browser=/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\/auth/);
    expect(cookie).not.toMatch(/Secure/); // http auth URL in tests; https sets Secure
    expect(page.body).not.toContain('<script');
    expect(page.body).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;@x.example"');
    expect(page.body).toContain('Acme &lt;Health&gt; &amp; &quot;Co&quot;');
    expect(page.body).toMatch(/<label for="email">/);
    expect(page.body).toMatch(/<html lang="en">/);
  });

  it('sets Secure cookies when the auth URL is https', async () => {
    const s = await testApp({ PUBLIC_BASE_URL: 'https://api.example.test' });
    try {
      const d = await newDeveloper(s, 'Secure app', [REDIRECT]);
      const res = await s.app.inject({ url: `/auth/authorize?${query({ client_id: d.user_client_id })}` });
      expect(String([res.headers['set-cookie']].flat()[0])).toMatch(/; Secure/);
    } finally {
      await s.close();
    }
  });

  it('refuses form posts without the CSRF token, from another browser, or from another origin', async () => {
    const f = await open();
    const creds = { email: 'page@example.com', password: 'page-password-1' };
    expect((await post('signin', f.cookie, { request: f.request, ...creds })).statusCode).toBe(403);
    expect((await post('signin', f.cookie, { request: f.request, csrf_token: 'x'.repeat(43), ...creds })).statusCode).toBe(403);
    const other = await open();
    expect((await post('signin', other.cookie, { request: f.request, csrf_token: f.csrf_token, ...creds })).statusCode).toBe(400);
    expect((await post('signin', f.cookie, { request: f.request, csrf_token: f.csrf_token, ...creds }, { origin: 'https://evil.example' })).statusCode).toBe(403);
    const ok = await post('signin', f.cookie, { request: f.request, csrf_token: f.csrf_token, ...creds }, { origin: new URL(t.config.authUrl).origin });
    expect(ok.statusCode).toBe(303);
  });

  it('wrong password: 401 page with the message; the e-mail is kept; no session', async () => {
    const f = await open();
    const res = await post('signin', f.cookie, { request: f.request, csrf_token: f.csrf_token, email: 'page@example.com', password: 'nope-nope-nope' });
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('The e-mail address or password is incorrect.');
    expect(res.body).toContain('role="alert"');
    expect(res.body).toContain('value="page@example.com"');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('throttles failed sign-ins per account (429 with Retry-After), also for the right password', async () => {
    await createUser(t.db, { env: 'sandbox', email: 'victim@example.com', password: 'victim-password-1', role: 'patient' });
    const f = await open();
    for (let i = 0; i < 10; i++) {
      const r = await post('signin', f.cookie, { request: f.request, csrf_token: f.csrf_token, email: 'Victim@example.com', password: `guess-${i}-xxxx` });
      expect(r.statusCode).toBe(401);
    }
    const blocked = await post('signin', f.cookie, { request: f.request, csrf_token: f.csrf_token, email: 'victim@example.com', password: 'victim-password-1' });
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.body).toContain('Too many failed sign-in attempts');
    // Other accounts are not affected.
    const other = await post('signin', f.cookie, { request: f.request, csrf_token: f.csrf_token, email: 'page@example.com', password: 'page-password-1' });
    expect(other.statusCode).toBe(303);
  });

  it('patient sign-up: validates, answers a taken e-mail exactly as a new one, creates a patient, then signs in to approval', async () => {
    const f = await open();
    const signupPage = await t.app.inject({ url: `/auth/authorize/signup?request=${encodeURIComponent(f.request)}`, headers: { cookie: f.cookie } });
    expect(signupPage.statusCode).toBe(200);
    expect(signupPage.body).toContain('Create your patient account');
    const form = { request: f.request, csrf_token: hiddenField(signupPage.body, 'csrf_token') };
    const short = await post('signup', f.cookie, { ...form, email: 'new@example.com', password: 'short', password_confirm: 'short' });
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('aria-invalid="true"');
    const mismatch = await post('signup', f.cookie, { ...form, email: 'new@example.com', password: 'new-password-1', password_confirm: 'new-password-2' });
    expect(mismatch.body).toContain('The passwords do not match.');
    // No account enumeration: a taken address gets the very page a new one does (the e-mail aside).
    const taken = await post('signup', f.cookie, { ...form, email: 'PAGE@example.com', password: 'new-password-1', password_confirm: 'new-password-1' });
    const ok = await post('signup', f.cookie, { ...form, email: 'new@example.com', password: 'new-password-1', password_confirm: 'new-password-1' });
    expect(taken.statusCode).toBe(200);
    expect(ok.statusCode).toBe(200);
    const normalise = (body: string) => body.replace(/PAGE@example\.com|new@example\.com/g, 'E').replace(/nonce-[\w+/=-]+|nonce="[^"]*"/g, 'N');
    expect(normalise(taken.body)).toBe(normalise(ok.body));
    expect(ok.body).toContain('If this e-mail address already had an account, it is unchanged');
    expect(await t.db.selectFrom('users').select('password_hash').where('email', '=', 'page@example.com').executeTakeFirstOrThrow()).toBeDefined();
    const signedIn = await post('signin', f.cookie, { ...form, email: 'new@example.com', password: 'new-password-1' });
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.headers.location).toMatch(/^\/auth\/authorize\/consent\?request=/);
    const user = await t.db.selectFrom('users').select(['role', 'password_hash']).where('email', '=', 'new@example.com').executeTakeFirstOrThrow();
    expect(user.role).toBe('patient');
    expect(user.password_hash).toMatch(/^\$argon2id\$/);
  });

  it('sign-up names a malformed e-mail address, and a too-long password even for a taken address, and creates nothing', async () => {
    const f = await open();
    const signupPage = await t.app.inject({ url: `/auth/authorize/signup?request=${encodeURIComponent(f.request)}`, headers: { cookie: f.cookie } });
    const form = { request: f.request, csrf_token: hiddenField(signupPage.body, 'csrf_token') };
    const malformed = await post('signup', f.cookie, { ...form, email: 'not-an-address', password: 'new-password-1', password_confirm: 'new-password-1' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.body).toContain('E-mail address must be a valid e-mail address.');
    // A taken address with another problem is answered with that problem, not as a sign-up.
    const long = 'p'.repeat(1025);
    const takenLong = await post('signup', f.cookie, { ...form, email: 'page@example.com', password: long, password_confirm: long });
    expect(takenLong.statusCode).toBe(400);
    expect(takenLong.body).toContain('Password must be at most 1024 characters.');
    expect(takenLong.body).not.toContain('If this e-mail address already had an account');
    const users = await t.db.selectFrom('users').select('email').where('email', 'in', ['not-an-address', 'page@example.com']).execute();
    expect(users.map((u) => u.email)).toEqual(['page@example.com']);
  });

  it('the approval page shows the offline-access message only when offline_access is requested', async () => {
    const signIn = async (scope: string) => {
      const f = await open({ scope });
      const res = await post('signin', f.cookie, { request: f.request, csrf_token: f.csrf_token, email: 'page@example.com', password: 'page-password-1' });
      const session = cookieOf(res);
      const consent = await t.app.inject({ url: String(res.headers.location), headers: { cookie: `${f.cookie}; ${session}` } });
      return { consent, cookie: `${f.cookie}; ${session}` };
    };
    const offline = await signIn('external.appointment.read offline_access');
    expect(offline.consent.statusCode).toBe(200);
    expect(offline.consent.body).toContain('Offline access');
    expect(offline.consent.body).toContain('See the appointments you book through this app');
    const online = await signIn('external.appointment.read');
    expect(online.consent.body).not.toContain('Offline access');
    // With a live session, the next authorize goes straight to approval…
    const again = await authorize({}, offline.cookie);
    expect(again.body).toContain('Allow Acme');
    // …unless prompt=login, or the login_hint names someone else.
    expect((await authorize({ prompt: 'login' }, offline.cookie)).body).toContain('<h1>Sign in</h1>');
    expect((await authorize({ login_hint: 'else@example.com' }, offline.cookie)).body).toContain('<h1>Sign in</h1>');
  });

  it('login sessions end after 30 idle minutes and after one day', async () => {
    const f = await open();
    const res = await post('signin', f.cookie, { request: f.request, csrf_token: f.csrf_token, email: 'page@example.com', password: 'page-password-1' });
    const cookie = `${f.cookie}; ${cookieOf(res)}`;
    expect(String([res.headers['set-cookie']].flat()[0])).toMatch(/Max-Age=86400/);
    expect((await authorize({}, cookie)).body).toContain('Allow Acme');
    const row = await t.db.selectFrom('login_sessions').select(['id_hash', 'created_at', 'expires_at']).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    expect((row.expires_at.getTime() - row.created_at.getTime()) / 3600_000).toBeCloseTo(24, 1);
    await t.db.updateTable('login_sessions').set({ last_seen_at: new Date(Date.now() - 31 * 60_000) }).where('id_hash', '=', row.id_hash).execute();
    expect((await authorize({}, cookie)).body).toContain('<h1>Sign in</h1>');
    await t.db.updateTable('login_sessions').set({ last_seen_at: new Date(Date.now() - 29 * 60_000) }).where('id_hash', '=', row.id_hash).execute();
    expect((await authorize({}, cookie)).body).toContain('Allow Acme');
    await t.db.updateTable('login_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('id_hash', '=', row.id_hash).execute();
    expect((await authorize({}, cookie)).body).toContain('<h1>Sign in</h1>');
  });

  it('deny redirects with access_denied; a completed request cannot be reused', async () => {
    const f = await open();
    const res = await post('decision', f.cookie, { request: f.request, csrf_token: f.csrf_token, decision: 'deny' });
    expect(res.statusCode).toBe(303);
    const loc = new URL(String(res.headers.location));
    expect(loc.searchParams.get('error')).toBe('access_denied');
    expect(loc.searchParams.get('state')).toBe('st-1');
    expect(loc.searchParams.get('iss')).toBe(t.config.authUrl);
    const again = await post('decision', f.cookie, { request: f.request, csrf_token: f.csrf_token, decision: 'allow' });
    expect(again.statusCode).toBe(400);
    expect(again.headers.location).toBeUndefined();
  });

  it('allow without a session goes back to sign-in', async () => {
    const f = await open();
    const res = await post('decision', f.cookie, { request: f.request, csrf_token: f.csrf_token, decision: 'allow' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toMatch(/^\/auth\/authorize\/signin\?request=/);
  });
});
