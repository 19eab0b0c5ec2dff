/**
 * The developer console at /console in real Chromium over a real server (docs/console.md, "The
 * console pages"; docs/decisions/0015-developer-console.md): the page under a strict CSP in every
 * environment; then a new developer end to end: signs up on the real sign-in page of the console
 * client, sees the sandbox app, reveals its secret once (a second view does not show it), gets a
 * client-credentials token with it, adds a redirect URI, runs a PKCE sign-in of a patient against that
 * URI with the app's user client, rotates the secret with a grace period (both secrets work), revokes
 * the user client after a confirmation, creates an app and asks for production access. Screenshots at
 * 1280 and 390 px go to `CONSOLE_SHOTS_DIR` (default: a folder in the temp directory).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/domain/users/create-user.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { authPath } from '../helpers/auth.js';
import { consoleEmail } from '../helpers/console.js';
import { scaled } from '../helpers/scale.js';
import { launchChromium } from './chromium.js';

const SHOTS_DIR = process.env.CONSOLE_SHOTS_DIR ?? join(tmpdir(), 'carebook-console-shots');
mkdirSync(SHOTS_DIR, { recursive: true });
const shot = (name: string): string => join(SHOTS_DIR, `${name}.png`);
/** The app's redirect URI: a loopback address nothing listens on; the browser's request to it is answered by the test. */
const APP_CALLBACK = 'http://127.0.0.1:9/my-app/callback';

describe('developer console in Chromium', () => {
  let t: TestApp;
  let base: string;
  let context: BrowserContext;
  let userDataDir: string;
  let page: Page;
  const errors: string[] = [];
  const email = consoleEmail('browser');
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  let machineId = '';
  let userClientId = '';
  let firstSecret = '';

  beforeAll(async () => {
    t = await testApp();
    base = await t.listen();
    userDataDir = await mkdtemp(join(tmpdir(), 'carebook-chromium-'));
    context = await launchChromium(userDataDir);
  });
  afterAll(async () => {
    await context?.close();
    await t?.close();
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
  });

  async function newPage(viewport: { width: number; height: number }): Promise<Page> {
    const p = await context.newPage();
    p.setDefaultTimeout(scaled(10_000));
    await p.setViewportSize(viewport);
    // Errors of the console's own pages (the sign-in pages have no favicon; the app's callback is answered by the test).
    const ours = (url: string): boolean => !/\/authorize|\/favicon\.ico$|127\.0\.0\.1:9\//.test(url);
    p.on('console', (m) => m.type() === 'error' && ours(m.location().url) && errors.push(`${m.text()} (${m.location().url})`));
    p.on('response', (r) => r.status() >= 400 && ours(r.url()) && errors.push(`${r.status()} ${r.url()}`));
    p.on('pageerror', (err) => errors.push(err.message));
    return p;
  }

  /** Horizontal overflow of the page in px (0 or less: nothing scrolls sideways). */
  const sideways = (p: Page): Promise<number> => p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  const said = (text: string | RegExp) => page.locator('#status', { hasText: text }).waitFor();

  async function machineToken(secret: string): Promise<number> {
    const res = await fetch(`${base}${authPath(t)}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: machineId, client_secret: secret, audience: t.config.audience }),
    });
    return res.status;
  }

  it('serves the page, script and style sheet with a strict CSP and no caching', async () => {
    for (const path of ['/console', '/console/callback', '/console/app.js', '/console/app.css', '/console/favicon.svg']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(200);
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = await res.text();
      if (path === '/console') {
        expect(body).toContain('data-client-id="developer-console-sandbox"');
        expect(body).toContain(`data-redirect-uri="${t.config.publicBaseUrl}/console/callback"`);
        expect(body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
        expect(body).not.toMatch(/<style|\sstyle=/);
        expect(body).not.toContain('{{');
      }
    }
    expect((await (await fetch(`${base}/console/app.js`)).text()).length).toBeLessThan(60_000);
  });

  it('is served in production too, with the production client', async () => {
    const prod = await testApp({ APP_ENV: 'production' });
    try {
      const res = await prod.app.inject({ url: '/console' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.body).toContain('data-client-id="developer-console"');
      expect((await prod.app.inject({ url: '/console/app.js' })).statusCode).toBe(200);
    } finally {
      await prod.close();
    }
  });

  it('refuses a sign-in callback this tab did not start, and fits a phone', async () => {
    const p = await newPage({ width: 390, height: 844 });
    await p.goto(`${base}/console/callback?code=x&state=y`);
    await p.locator('#alert', { hasText: /not started in this tab/ }).waitFor();
    expect(p.url()).toBe(`${base}/console`);
    await p.getByRole('button', { name: 'Create a developer account' }).waitFor();
    expect(await sideways(p)).toBeLessThanOrEqual(0);
    await p.screenshot({ path: shot('welcome-390'), fullPage: true });
    await p.close();
  });

  it('a new developer signs up on the real sign-in page with PKCE and lands on their sandbox app', async () => {
    page = await newPage({ width: 1280, height: 900 });
    await page.goto(`${base}/console`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.screenshot({ path: shot('welcome-1280') });
    await page.getByRole('button', { name: 'Create a developer account' }).click();
    await page.waitForURL(/\/authorize\?/);
    const url = new URL(page.url());
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: 'developer-console-sandbox', redirect_uri: `${t.config.publicBaseUrl}/console/callback`, code_challenge_method: 'S256', response_type: 'code', scope: 'console offline_access',
    });
    await page.getByRole('link', { name: 'Create a developer account' }).click();
    await page.getByLabel('E-mail address').fill(email);
    await page.locator('#password').fill(password);
    await page.locator('#password_confirm').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    // Sign-up shows the sign-in page with the address filled in.
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('#apps-h').waitFor();
    expect(page.url()).toBe(`${base}/console`);
    expect(await page.locator('#who').textContent()).toBe(email);
    const items = page.locator('#app-list > li');
    await items.first().waitFor();
    expect(await items.count()).toBe(1);
    expect(await items.first().textContent()).toContain('sandbox');
    expect(await items.first().textContent()).toMatch(/machine credential: .+user client: /);
    // The nav lists the views.
    expect(await page.locator('#views a').allTextContents()).toEqual(['Apps', 'Account', 'Webhooks', 'Request log', 'Usage', 'Sandbox']);
    await page.screenshot({ path: shot('apps-1280') });
  });

  it('the app shows its secret once; a second view does not; the secret gets a client-credentials token', async () => {
    await page.locator('#app-list a').first().click();
    const card = page.locator('[data-secret-for]');
    await card.waitFor();
    expect(await card.textContent()).toContain('Shown once.');
    firstSecret = await card.locator('input').inputValue();
    machineId = (await card.getAttribute('data-secret-for'))!;
    userClientId = (await page.locator('[data-kind="user"]').getAttribute('data-client-id'))!;
    expect(firstSecret.length).toBeGreaterThan(20);
    expect(await page.locator('[data-kind="machine"]').textContent()).toContain('external.appointment.write');
    // Focus moves to the once-shown secret.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-secret-for'))).toBe(machineId);
    await page.screenshot({ path: shot('app-secret-1280'), fullPage: true });
    await page.reload();
    await page.locator('[data-kind="machine"]').waitFor();
    expect(await page.locator('[data-secret-for]').count()).toBe(0);
    expect(await page.locator('#app-clients').textContent()).not.toContain(firstSecret);
    expect(await machineToken(firstSecret)).toBe(200);
    expect(await machineToken('wrong-secret')).toBe(401);
  });

  it('adds a redirect URI (a bad one names the field), and a patient signs in against it with PKCE', async () => {
    const user = page.locator('[data-kind="user"]');
    await user.getByRole('button', { name: 'Add a redirect URI' }).click();
    await user.getByLabel('Redirect URI 1', { exact: true }).fill('not a url');
    await user.getByRole('button', { name: 'Save redirect URIs' }).click();
    await user.locator('[role="alert"]', { hasText: 'redirect_uris[0]' }).waitFor();
    expect(await user.getByLabel('Redirect URI 1', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await user.getByLabel('Redirect URI 1', { exact: true }).fill(APP_CALLBACK);
    await user.getByRole('button', { name: 'Save redirect URIs' }).click();
    await said('Redirect URIs saved');
    expect(await page.locator('[data-kind="user"]').getByLabel('Redirect URI 1', { exact: true }).inputValue()).toBe(APP_CALLBACK);

    // A patient of the developer's app signs in through the app's user client, in this browser.
    const patient = { email: consoleEmail('patient'), password: `pw-${randomBytes(9).toString('base64url')}` };
    await createUser(t.db, { env: 'sandbox', email: patient.email, password: patient.password, role: 'patient' });
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(8).toString('hex');
    const p = await newPage({ width: 1280, height: 900 });
    let callback: URL | undefined;
    await p.route(`${APP_CALLBACK}**`, async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'signed in' });
    });
    const query = new URLSearchParams({
      response_type: 'code', client_id: userClientId, redirect_uri: APP_CALLBACK, scope: 'external.appointment.read', state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    });
    await p.goto(`${base}${authPath(t)}/authorize?${query}`);
    await p.getByLabel('E-mail address').fill(patient.email);
    await p.getByLabel('Password').fill(patient.password);
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    await p.getByRole('button', { name: 'Allow' }).click();
    await p.getByText('signed in').waitFor();
    expect(callback?.searchParams.get('state')).toBe(state);
    const code = callback!.searchParams.get('code')!;
    const res = await fetch(`${base}${authPath(t)}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', client_id: userClientId, code, redirect_uri: APP_CALLBACK, code_verifier: verifier }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { access_token?: string }).access_token).toBeTruthy();
    await p.close();
  });

  it('rotates the secret with a grace period: the new secret is shown once and both work', async () => {
    const machine = page.locator('[data-kind="machine"]');
    await machine.getByLabel('Old secret keeps working for').selectOption({ label: '1 hour' });
    await machine.getByRole('button', { name: 'Rotate secret' }).click();
    await said(/Secret rotated\. The old secret works until/);
    const card = page.locator(`[data-secret-for="${machineId}"]`);
    const second = await card.locator('input').inputValue();
    expect(second).not.toBe(firstSecret);
    expect(await page.locator('[data-kind="machine"]').textContent()).toContain('Old secret works until');
    await page.screenshot({ path: shot('app-rotated-1280'), fullPage: true });
    expect(await machineToken(firstSecret)).toBe(200);
    expect(await machineToken(second)).toBe(200);
  });

  it('revokes the user client only after a confirmation; its sign-in stops', async () => {
    const revokeButton = page.locator('[data-kind="user"]').getByRole('button', { name: 'Revoke client' });
    await revokeButton.click();
    await page.getByRole('dialog').getByRole('button', { name: 'Keep it' }).click();
    expect(await page.locator('[data-kind="user"] .chip.bad').count()).toBe(0);
    await revokeButton.click();
    expect(await page.getByRole('dialog').textContent()).toContain(userClientId);
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await said(`${userClientId} is revoked.`);
    await page.locator('[data-kind="user"] .chip.bad', { hasText: 'revoked' }).waitFor();
    const query = new URLSearchParams({ response_type: 'code', client_id: userClientId, redirect_uri: APP_CALLBACK, scope: 'external.appointment.read', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' });
    expect((await fetch(`${base}${authPath(t)}/authorize?${query}`, { redirect: 'manual' })).status).toBe(400);
  });

  it('creates an app whose secret is shown once, with a copy button', async () => {
    await page.getByRole('link', { name: 'Apps', exact: true }).click();
    await page.locator('#apps-h:focus').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Booking widget');
    await page.getByLabel(/Redirect URIs/).fill('https://widget.example.org/callback');
    await page.getByRole('button', { name: 'Create app' }).click();
    await said('App Booking widget created.');
    const card = page.locator('#new-app-secret [data-secret-for]');
    expect(await card.getByRole('button', { name: 'Copy secret' }).isVisible()).toBe(true);
    expect(await card.textContent()).toContain('Shown once.');
    // The page announces the app, then lists the apps again: wait for the list to show it.
    await page.locator('#app-list > li', { hasText: 'Booking widget' }).waitFor();
    expect(await page.locator('#app-list > li').count()).toBe(2);
    await page.screenshot({ path: shot('apps-created-1280'), fullPage: true });
  });

  it('the account view shows the sandbox developer and asks for production access', async () => {
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    await page.locator('#account-h:focus').waitFor();
    expect(await page.locator('#account-details').textContent()).toContain(email);
    await page.getByRole('button', { name: 'Request production access' }).click();
    await page.locator('#alert', { hasText: 'company' }).waitFor();
    await page.getByLabel('Company').fill('Example Health Inc.');
    await page.getByLabel('What will you build?').fill('Online booking for our members');
    await page.getByRole('button', { name: 'Request production access' }).click();
    await said('Production access requested.');
    expect(await page.locator('#prod-state').textContent()).toContain('waiting for the operator');
    expect(await page.locator('#prod-form').isHidden()).toBe(true);
    await page.screenshot({ path: shot('account-1280'), fullPage: true });
  });

  it('fits a 390 px phone without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Apps', exact: true }).click();
    await page.locator('#apps-h:focus').waitFor();
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: shot('apps-390'), fullPage: true });
    await page.locator('#app-list a').first().click();
    await page.locator('[data-kind="machine"]').waitFor();
    expect(await sideways(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: shot('app-390'), fullPage: true });
    await page.getByRole('link', { name: 'Account', exact: true }).click();
    await page.locator('#account-h:focus').waitFor();
    expect(await sideways(page)).toBeLessThanOrEqual(0);
  });

  it('signs out, and the page logged no errors', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await said('You are signed out.');
    expect(await page.evaluate(() => sessionStorage.getItem('carebook.console.tokens'))).toBeNull();
    // The one 400 the test asked for (the bad redirect URI) is the browser logging a failed fetch; nothing else.
    expect(errors.filter((e) => !/400 .*\/redirect_uris\b|status of 400 .*\/redirect_uris\b/.test(e))).toEqual([]);
    expect(errors.length).toBe(2);
  });
});
