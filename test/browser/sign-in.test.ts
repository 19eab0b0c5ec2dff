/**
 * The sign-in page in a real browser (Playwright driving Debian's Chromium), JavaScript disabled
 * to prove the page needs none: sign up, sign in, wrong password, deny, and a full PKCE round trip
 * ending in a token exchange.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { createUser } from '../../src/domain/users/create-user.js';
import { newDeveloper, testApp, testPort, type TestApp } from '../helpers/app.js';
import { launchChromium } from './chromium.js';

describe('sign-in page in Chromium', () => {
  let t: TestApp;
  let base: string;
  let dev: NewDeveloper;
  let context: BrowserContext;
  let userDataDir: string;
  let callbackServer: Server;
  let callback: string;

  beforeAll(async () => {
    t = await testApp();
    base = await t.listen();
    // A stand-in for the client app: the redirect URI answers with a small page.
    const port = testPort();
    callbackServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Back in the app</h1>'));
    await new Promise<void>((resolve) => callbackServer.listen(port, '127.0.0.1', resolve));
    callback = `http://127.0.0.1:${port}/callback`;
    dev = await newDeveloper(t, 'Sunrise Health', [callback]);
    await createUser(t.db, { env: 'sandbox', email: 'maria@example.com', password: 'maria-password-1', role: 'patient' });
    userDataDir = await mkdtemp(join(tmpdir(), 'carebook-chromium-'));
    context = await launchChromium(userDataDir, { javaScriptEnabled: false });
  });
  afterAll(async () => {
    await context?.close();
    await new Promise((r) => callbackServer?.close(r));
    await t?.close();
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
  });

  function authorizeUrl(opts: { scope?: string; state?: string; verifier: string; loginHint?: string }): string {
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: dev.user_client_id,
      redirect_uri: callback,
      scope: opts.scope ?? 'external.appointment.read external.appointment.write',
      code_challenge: createHash('sha256').update(opts.verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: opts.state ?? 'state-1',
      ...(opts.loginHint ? { login_hint: opts.loginHint } : {}),
    });
    return `${t.config.authUrl}/authorize?${q}`;
  }

  async function freshPage(): Promise<Page> {
    await context.clearCookies();
    return context.newPage();
  }

  const verifier = () => randomBytes(32).toString('base64url');

  it('full PKCE round trip: sign in, see the offline-access message, allow, exchange the code', async () => {
    const page = await freshPage();
    const v = verifier();
    await page.goto(authorizeUrl({ verifier: v, scope: 'external.appointment.read offline_access', state: 'xyz' }));
    expect(await page.title()).toBe('Sign in – Carebook');
    await page.screenshot({ path: join(tmpdir(), 'carebook-signin.png'), fullPage: true });
    await page.getByLabel('E-mail address').fill('maria@example.com');
    await page.getByLabel('Password').fill('maria-password-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/authorize\/consent/);
    await expect(page.getByRole('heading', { name: 'Offline access' }).isVisible()).resolves.toBe(true);
    await page.screenshot({ path: join(tmpdir(), 'carebook-consent.png'), fullPage: true });
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((u) => u.toString().startsWith(callback));
    const back = new URL(page.url());
    expect(back.searchParams.get('state')).toBe('xyz');
    const code = back.searchParams.get('code')!;
    const res = await fetch(`${t.config.authUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', client_id: dev.user_client_id, code, redirect_uri: callback, code_verifier: v }),
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, refresh_token: expect.any(String) });
    await page.close();
  });

  it('wrong password shows an error and keeps the e-mail', async () => {
    const page = await freshPage();
    await page.goto(authorizeUrl({ verifier: verifier(), loginHint: 'maria@example.com' }));
    expect(await page.getByLabel('E-mail address').inputValue()).toBe('maria@example.com');
    await page.getByLabel('Password').fill('not-her-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('The e-mail address or password is incorrect.');
    expect(await page.getByLabel('E-mail address').inputValue()).toBe('maria@example.com');
    await page.screenshot({ path: join(tmpdir(), 'carebook-signin-error.png'), fullPage: true });
    await page.close();
  });

  it('sign up as a new patient, then approve', async () => {
    const page = await freshPage();
    await page.goto(authorizeUrl({ verifier: verifier() }));
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('E-mail address').fill('new.patient@example.com');
    await page.getByLabel('Password', { exact: false }).first().fill('new-patient-pw-1');
    await page.getByLabel('Confirm password').fill('new-patient-pw-1');
    await page.screenshot({ path: join(tmpdir(), 'carebook-signup.png'), fullPage: true });
    await page.getByRole('button', { name: 'Create account' }).click();
    // The same answer whether or not the address had an account: sign in with the new password.
    await expect(page.getByRole('status').textContent()).resolves.toContain('Sign in with your e-mail address and password');
    expect(await page.getByLabel('E-mail address').inputValue()).toBe('new.patient@example.com');
    await page.screenshot({ path: join(tmpdir(), 'carebook-signup-done.png'), fullPage: true });
    await page.getByLabel('Password').fill('new-patient-pw-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/authorize\/consent/);
    expect(await page.textContent('main')).toContain('new.patient@example.com');
    expect(await page.textContent('main')).not.toContain('Offline access');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((u) => u.toString().startsWith(callback));
    expect(new URL(page.url()).searchParams.get('code')).toEqual(expect.any(String));
    const user = await t.db.selectFrom('users').select('role').where('email', '=', 'new.patient@example.com').executeTakeFirst();
    expect(user?.role).toBe('patient');
    await page.close();
  });

  it('deny returns to the app with error=access_denied', async () => {
    const page = await freshPage();
    await page.goto(authorizeUrl({ verifier: verifier(), state: 'deny-state' }));
    await page.getByLabel('E-mail address').fill('maria@example.com');
    await page.getByLabel('Password').fill('maria-password-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/authorize\/consent/);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL((u) => u.toString().startsWith(callback));
    const back = new URL(page.url());
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('error_description')).toEqual(expect.any(String));
    expect(back.searchParams.get('state')).toBe('deny-state');
    expect(back.searchParams.get('code')).toBeNull();
    await page.close();
  });

  it('an unregistered redirect URI gets an error page, not a redirect', async () => {
    const page = await freshPage();
    const url = authorizeUrl({ verifier: verifier() }).replace(encodeURIComponent(callback), encodeURIComponent('https://evil.example/cb'));
    const res = await page.goto(url);
    expect(res?.status()).toBe(400);
    expect(page.url()).toContain(base);
    expect(await page.getByRole('alert').textContent()).toContain('not registered');
    await page.close();
  });
});
