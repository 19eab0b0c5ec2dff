/**
 * The booking demo at /demo in real Chromium (JavaScript on): PKCE sign-in through the real sign-in
 * page, search by ZIP code and specialty, availability, booking, listing and cancelling, where
 * keyboard focus goes after each, and booking on a phone-sized viewport without horizontal
 * scrolling; the strict CSP; production answers 404. Screenshots (desktop and phone) go to the temp
 * directory.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { bootstrapSandbox } from '../../src/domain/demo/bootstrap.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { createUser } from '../../src/domain/users/create-user.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';
import { launchChromium } from './chromium.js';

describe('booking demo in Chromium', () => {
  let t: TestApp;
  let base: string;
  let creds: NewDeveloper;
  let context: BrowserContext;
  let userDataDir: string;
  let dataDir: string;
  let target: { zip: string; specialtyId: string; providerName: string };
  const errors: string[] = [];

  beforeAll(async () => {
    t = await testApp();
    dataDir = await mkdtemp(join(tmpdir(), 'carebook-demo-'));
    creds = (await bootstrapSandbox(t.db, { dataDir, publicBaseUrl: t.config.publicBaseUrl, demoProviders: 30 })).credentials!;
    base = await t.listen();
    await createUser(t.db, { env: 'sandbox', email: 'pat@example.com', password: 'pat-password-1', role: 'patient', providerId: null });
    const token = await clientToken(t, creds);
    const entities = (await t.app.inject({ url: '/v1/schedulable_entities?page_size=100', headers: bearer(token) })).json().data.schedulable_entities as {
      id: string; main_specialty_id?: string; new_patient_availability: { next_28_days: string };
    }[];
    const entity = entities.find((e) => e.main_specialty_id && e.new_patient_availability.next_28_days === 'available' && !/^pr_(pending|failed|manual|reschedulefailed)\|/.test(e.id))!;
    const pl = (await t.app.inject({ url: `/v1/provider_locations/${encodeURIComponent(entity.id)}`, headers: bearer(token) })).json().data;
    target = { zip: pl.location.zip_code, specialtyId: entity.main_specialty_id!, providerName: pl.provider.full_name };
    userDataDir = await mkdtemp(join(tmpdir(), 'carebook-chromium-'));
    context = await launchChromium(userDataDir);
  });
  afterAll(async () => {
    await context?.close();
    await t?.close();
    for (const d of [userDataDir, dataDir]) if (d) await rm(d, { recursive: true, force: true });
  });

  async function newPage(viewport: { width: number; height: number }): Promise<Page> {
    const page = await context.newPage();
    await page.setViewportSize(viewport);
    page.on('console', (m) => m.type() === 'error' && !/status of 404/.test(m.text()) && errors.push(m.text()));
    // The auth server's pages have no favicon; the demo's own assets must all load.
    page.on('response', (r) => r.status() >= 400 && !r.url().endsWith('/favicon.ico') && errors.push(`${r.status()} ${r.url()}`));
    page.on('pageerror', (e) => errors.push(e.message));
    return page;
  }

  /** The id of the focused element. */
  const focusedId = (page: Page): Promise<string | undefined> => page.evaluate(() => document.activeElement?.id);

  /** Searches, opens the target provider's times (checking the toggle's aria-controls) and picks the first. */
  async function chooseFirstTime(page: Page): Promise<void> {
    await page.getByLabel('ZIP code', { exact: true }).fill(target.zip);
    await page.getByLabel('Specialty').selectOption(target.specialtyId);
    await page.getByRole('button', { name: 'Search' }).click();
    const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: target.providerName }) }).first();
    await card.waitFor();
    const show = card.getByRole('button', { name: 'Show times' });
    const controls = await show.getAttribute('aria-controls');
    expect(controls).toMatch(/^times-\d+$/);
    expect(await page.locator(`#${controls}`).isHidden()).toBe(true);
    await show.click();
    const firstTime = page.locator(`#${controls}`).getByRole('button').first();
    await firstTime.waitFor();
    expect(await show.getAttribute('aria-expanded')).toBe('true');
    // The toggle closes the times and opens them again.
    await show.click();
    expect(await page.locator(`#${controls}`).isHidden()).toBe(true);
    expect(await show.getAttribute('aria-expanded')).toBe('false');
    await show.click();
    await firstTime.waitFor();
    await firstTime.click();
    await page.getByRole('heading', { name: 'Your details' }).waitFor();
    expect(await focusedId(page)).toBe('booking-h');
  }

  /** Fills the booking form and books; focus then lands on the "My appointments" heading. */
  async function fillAndBook(page: Page): Promise<void> {
    await page.getByLabel('First name').fill('Pat');
    await page.getByLabel('Last name').fill('Example');
    await page.getByLabel('Date of birth').fill('1988-02-29');
    await page.getByLabel('Sex at birth').selectOption('female');
    await page.getByLabel('Phone (10 digits)').fill('2125550123');
    await page.getByLabel('E-mail').fill('pat@example.com');
    await page.getByLabel('Street address').fill('1 Main St');
    await page.getByLabel('City').fill('New York');
    await page.getByLabel('State').fill('NY');
    await page.getByLabel('Your ZIP code').fill('10001');
    await page.getByRole('button', { name: 'Book appointment' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Booked');
    await expect.poll(() => focusedId(page), { message: 'focus after booking' }).toBe('mine-h');
    expect(await page.locator('#book').isHidden()).toBe(true);
  }

  it('serves the page with a strict CSP', async () => {
    const res = await fetch(`${base}/demo`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(await res.text()).toContain(`data-client-id="${creds.user_client_id}"`);
    expect((await fetch(`${base}/demo/app.js`)).headers.get('content-type')).toContain('javascript');
  });

  it('a patient signs in with PKCE, searches, books, lists and cancels', async () => {
    const page = await newPage({ width: 1280, height: 900 });
    await page.goto(`${base}/demo`);
    await page.screenshot({ path: join(tmpdir(), 'carebook-demo-welcome.png'), fullPage: true });
    await page.getByRole('button', { name: 'Sign in to book' }).click();
    await page.waitForURL(/\/auth\/authorize/);
    await page.getByLabel('E-mail address').fill('pat@example.com');
    await page.getByLabel('Password').fill('pat-password-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/authorize\/consent/);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${base}/demo`);
    await page.getByRole('heading', { name: 'Find a provider' }).waitFor();
    // The list loads after the page: wait for it (isVisible() does not wait).
    await page.getByText('No appointments yet.').waitFor();

    await chooseFirstTime(page);
    // "Back" hides the form and returns focus to the chosen time; Enter there opens the form again.
    await page.getByRole('button', { name: 'Back' }).click();
    expect(await page.evaluate(() => document.activeElement?.tagName === 'BUTTON' && !!document.activeElement.closest('ul.times'))).toBe(true);
    await page.keyboard.press('Enter');
    await expect.poll(() => focusedId(page)).toBe('booking-h');
    await page.screenshot({ path: join(tmpdir(), 'carebook-demo-details.png'), fullPage: true });
    await fillAndBook(page);
    const mine = page.getByRole('list', { name: 'My appointments' });
    await mine.getByRole('listitem').first().getByText('pending booking').or(mine.getByText('confirmed')).first().waitFor();
    await page.screenshot({ path: join(tmpdir(), 'carebook-demo-booked.png'), fullPage: true });

    await mine.getByRole('button', { name: /^Cancel appointment/ }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Appointment cancelled.');
    await mine.getByText('cancelled').waitFor();
    await expect.poll(() => focusedId(page), { message: 'focus after cancelling' }).toBe('mine-h');

    // On a phone: the keyboard reaches the search button; booking works without horizontal scrolling.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByLabel('ZIP code', { exact: true }).fill(target.zip);
    await page.getByLabel('Specialty').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('status').textContent()).toContain('found near');
    await chooseFirstTime(page);
    const overflow = await page.evaluate(() => {
      const form = document.getElementById('book')!;
      const widest = Math.max(...Array.from(form.querySelectorAll('input, select, button, label')).map((e) => e.getBoundingClientRect().right));
      return { page: document.documentElement.scrollWidth - document.documentElement.clientWidth, form: form.scrollWidth - form.clientWidth, beyondViewport: widest - window.innerWidth };
    });
    expect(overflow.page, 'page scrolls sideways').toBeLessThanOrEqual(0);
    expect(overflow.form, 'booking form scrolls sideways').toBeLessThanOrEqual(0);
    expect(overflow.beyondViewport, 'a booking field reaches past the screen').toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(tmpdir(), 'carebook-demo-phone-details.png'), fullPage: true });
    await fillAndBook(page);
    await page.screenshot({ path: join(tmpdir(), 'carebook-demo-phone.png'), fullPage: true });
    expect(errors, errors.join('\n')).toEqual([]);
    await page.close();
  });

  it('needs only production dependencies at run time (npm ci --omit=dev keeps /demo, /practice and /console working)', async () => {
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { dependencies: Record<string, string> };
    // The pages' routes and what they share (the esbuild bundling among it).
    const files = ['src/routes/demo/index.ts', 'src/routes/practice-workspace/index.ts', 'src/routes/console-pages/index.ts', 'src/routes/web-app/serve.ts'];
    const source = (await Promise.all(files.map((f) => readFile(f, 'utf8')))).join('\n');
    // Bare module names the route imports, statically (not type-only) or dynamically (esbuild, at first request).
    const bare = [...source.matchAll(/^import (?!type )[^;]*? from '([^'.][^']*)'|import\('([^'.][^']*)'\)/gm)]
      .map((m) => (m[1] ?? m[2])!)
      .filter((name) => !name.startsWith('node:'))
      .map((name) => name.split('/').slice(0, name.startsWith('@') ? 2 : 1).join('/'));
    expect(bare).toContain('esbuild');
    for (const name of bare) expect(pkg.dependencies, `${name} must be in dependencies`).toHaveProperty([name]);
  });

  it('is absent in production', async () => {
    const prod = await testApp({ APP_ENV: 'production' });
    try {
      expect((await prod.app.inject({ url: '/demo' })).statusCode).toBe(404);
      expect((await prod.app.inject({ url: '/demo/app.js' })).statusCode).toBe(404);
    } finally {
      await prod.close();
    }
  });
});
