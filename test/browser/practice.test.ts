/**
 * The practice workspace at /practice in real Chromium (docs/practice-guide.md,
 * docs/decisions/0014-practice-workspace.md): the page and its assets under a strict CSP in every
 * environment, and the PKCE sign-in redirect to the real sign-in page. Screenshots go to the temp
 * directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { testApp, type TestApp } from '../helpers/app.js';

export const shots = (name: string): string => join(tmpdir(), `carebook-practice-${name}.png`);

describe('practice workspace in Chromium', () => {
  let t: TestApp;
  let base: string;
  let context: BrowserContext;
  let userDataDir: string;
  const errors: string[] = [];

  beforeAll(async () => {
    t = await testApp();
    base = await t.listen();
    userDataDir = await mkdtemp(join(tmpdir(), 'carebook-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await context?.close();
    await t?.close();
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
  });

  async function newPage(viewport: { width: number; height: number }): Promise<Page> {
    const page = await context.newPage();
    await page.setViewportSize(viewport);
    // Errors of the workspace's own pages (the auth server's sign-in page has no favicon: its 404 is not ours).
    page.on('console', (m) => m.type() === 'error' && !/\/authorize|\/favicon\.ico$/.test(m.location().url) && errors.push(`${m.text()} (${m.location().url})`));
    page.on('response', (r) => r.status() >= 400 && !r.url().endsWith('/favicon.ico') && !/\/authorize/.test(r.url()) && errors.push(`${r.status()} ${r.url()}`));
    page.on('pageerror', (e) => errors.push(e.message));
    return page;
  }

  it('serves the page, script and style sheet with a strict CSP and no caching', async () => {
    for (const path of ['/practice', '/practice/callback', '/practice/app.js', '/practice/app.css']) {
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
      if (path === '/practice') {
        expect(body).toContain('data-client-id="practice-workspace-sandbox"');
        expect(body).toContain(`data-redirect-uri="${t.config.publicBaseUrl}/practice/callback"`);
        // No inline script or style: the CSP would block it.
        expect(body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
        expect(body).not.toMatch(/<style|\sstyle=/);
      }
    }
    expect((await fetch(`${base}/practice/app.js`)).headers.get('content-type')).toContain('javascript');
    // Small: the first view needs little.
    expect((await (await fetch(`${base}/practice/app.js`)).text()).length).toBeLessThan(60_000);
  });

  it('is served in production too', async () => {
    const prod = await testApp({ APP_ENV: 'production' });
    try {
      const page = await prod.app.inject({ url: '/practice' });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('data-client-id="practice-workspace"');
      expect((await prod.app.inject({ url: '/practice/app.js' })).statusCode).toBe(200);
    } finally {
      await prod.close();
    }
  });

  it('shows the welcome page and starts the PKCE sign-in on the real sign-in page', async () => {
    const page = await newPage({ width: 1280, height: 900 });
    const t0 = Date.now();
    await page.goto(`${base}/practice`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(Date.now() - t0, 'first view').toBeLessThan(3_000);
    await page.screenshot({ path: shots('welcome'), fullPage: true });
    // Keyboard: the skip link first, then the sign-in button.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/authorize\?/);
    const url = new URL(page.url());
    expect(url.searchParams.get('client_id')).toBe('practice-workspace-sandbox');
    expect(url.searchParams.get('redirect_uri')).toBe(`${t.config.publicBaseUrl}/practice/callback`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('scope')).toContain('practice.read');
    expect(url.searchParams.get('scope')).toContain('offline_access');
    expect(url.searchParams.get('state')).toBeTruthy();

    // A callback this tab did not start is refused with a message, not a crash.
    await page.goto(`${base}/practice/callback?code=x&state=y`);
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/not started (in this tab|by this app)/);
    expect(page.url()).toBe(`${base}/practice`);
    await page.close();
    expect(errors, errors.join('\n')).toEqual([]);
  });

  it('fits a phone: no horizontal scrolling on the welcome page', async () => {
    const page = await newPage({ width: 390, height: 844 });
    await page.goto(`${base}/practice`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await page.close();
  });
});
