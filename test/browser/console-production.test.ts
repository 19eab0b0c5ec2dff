/**
 * Production access in real Chromium (docs/console.md, "Production"): the account asks; the operator,
 * in the Operator view, refuses with a reason (a blank reason is named), the account reads the reason
 * in its Account view and asks again; the operator grants. On PostgreSQL the sandbox deployment writes
 * the grant into a separate production deployment's database (`PRODUCTION_DATABASE_URL`): the
 * Account view links to the production console, where the same e-mail address and password sign in
 * and the production app shows its secret once. On PGlite the grant stays in the one database and the
 * production app is listed under Apps. Screenshots go to `CONSOLE_SHOTS_DIR`.
 */
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.js';
import { consoleEmail } from '../helpers/console.js';
import { testDatabaseUrl, type TestDatabase } from '../helpers/db.js';
import { consoleShot, openConsoleBrowser, signUpInConsole, type ConsoleBrowser } from './console-browser.js';

const shot = consoleShot;
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdefgh';

describe('production access in Chromium', () => {
  let t: TestApp;
  let production: TestApp | undefined;
  let base: string;
  let browser: ConsoleBrowser;
  let page: Page;
  const errors: string[] = [];
  const email = consoleEmail('prod');
  const password = `pw-${randomBytes(9).toString('base64url')}`;

  beforeAll(async () => {
    if (testDatabaseUrl) {
      production = await testApp({ APP_ENV: 'production' });
      await production.listen();
      const u = new URL(testDatabaseUrl);
      u.searchParams.set('options', `-c search_path="${(production.handle as TestDatabase).schema}",public`);
      t = await testApp({ PRODUCTION_DATABASE_URL: u.toString(), PRODUCTION_PUBLIC_BASE_URL: production.config.publicBaseUrl });
    } else {
      t = await testApp();
    }
    base = await t.listen();
    browser = await openConsoleBrowser(errors);
    page = await browser.newPage();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await production?.close();
  });

  const said = (text: string | RegExp) => page.locator('#status', { hasText: text }).waitFor();
  const go = async (view: string) => {
    await page.locator(`a[data-view="${view}"]`).click();
    await page.locator(`#${view}-h`).waitFor();
  };
  const askForProduction = async (useCase: string) => {
    await go('account');
    await page.getByLabel('Company').fill('Refusable Clinic Software');
    await page.getByLabel('What will you build?').fill(useCase);
    await page.getByRole('button', { name: 'Request production access' }).click();
    await page.locator('#prod-state', { hasText: 'waiting' }).waitFor();
  };
  const listRequests = async () => {
    await go('operator');
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'List requests' }).click();
  };

  it('signs up and asks for production access', async () => {
    await signUpInConsole(page, base, { email, password });
    await page.locator('#app-list a').first().waitFor();
    await askForProduction('Booking, maybe.');
  });

  it('the operator refuses with a reason (a blank one is named); the account reads it and may ask again', async () => {
    await listRequests();
    await page.getByRole('button', { name: `Refuse ${email}` }).click();
    const reason = page.getByLabel(`Reason for refusing ${email}`);
    await expect(reason.evaluate((n) => n === document.activeElement)).resolves.toBe(true);
    await page.getByRole('button', { name: `Send the refusal to ${email}` }).click();
    await page.locator('#op-alert', { hasText: 'reason' }).waitFor();
    expect(await reason.getAttribute('aria-invalid')).toBe('true');
    await reason.fill('Tell us which members will book, and from which app.');
    await page.screenshot({ path: shot('production-refuse-1280'), fullPage: true });
    await page.getByRole('button', { name: `Send the refusal to ${email}` }).click();
    await said(`Production request of ${email} refused`);
    await page.locator('#op-status').selectOption('refused');
    await page.getByRole('button', { name: 'List requests' }).click();
    await page.locator('#op-table q', { hasText: 'Tell us which members will book' }).first().waitFor();

    await go('account');
    await page.locator('#prod-state', { hasText: 'was refused' }).waitFor();
    expect(await page.locator('#prod-state q').textContent()).toBe('Tell us which members will book, and from which app.');
    expect(await page.locator('#prod-form').isVisible()).toBe(true);
    await page.screenshot({ path: shot('production-refused-1280'), fullPage: true });
    await askForProduction('Booking for the 40,000 members of our plan, from our member app.');
  });

  it('the operator grants; the account finds its production app (in a production deployment of its own, on PostgreSQL)', async () => {
    await listRequests();
    await page.locator('#op-status').selectOption('pending');
    await page.getByRole('button', { name: 'List requests' }).click();
    await page.getByRole('button', { name: `Grant ${email}` }).click();
    await said(`Production granted to ${email}`);
    await go('account');
    await page.locator('#prod-state', { hasText: 'Production access is granted' }).waitFor();
    await page.screenshot({ path: shot('production-granted-1280'), fullPage: true });
    if (!production) {
      await go('apps');
      await page.locator('#app-list', { hasText: 'Refusable Clinic Software' }).waitFor();
      expect(errors.filter((e) => !/401 .*\/admin\/v1/.test(e))).toEqual([]);
      return;
    }
    const link = page.getByRole('link', { name: 'the production console' });
    expect(await link.getAttribute('href')).toBe(`${production.config.publicBaseUrl}/console`);
    await link.click();
    await page.waitForURL(`${production.config.publicBaseUrl}/console**`);
    await page.getByRole('button', { name: 'Sign in' }).first().click();
    await page.waitForURL(/\/authorize\?/);
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('#app-list a', { hasText: 'Refusable Clinic Software' }).click();
    const card = page.locator('[data-secret-for]');
    expect(await card.locator('input').inputValue()).toMatch(/.{20,}/);
    await page.screenshot({ path: shot('production-console-app-1280'), fullPage: true });
    expect(errors.filter((e) => !/401 .*\/admin\/v1/.test(e))).toEqual([]);
  });
});
