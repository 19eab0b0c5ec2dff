/**
 * The developer console's tool views in real Chromium over a real server (docs/console.md, "The
 * console pages", "Webhooks", "Request log", "Usage", "Sandbox tools"): a new developer signs up, sets
 * a real local receiver in the Webhooks view (the generated key is shown once and the receiver verifies
 * the test event with it), runs the `failed` fixture in the Sandbox view; the evaluator and the webhook
 * worker run once; the delivery shows in the log and a replay sends the same `webhook-id` again; the
 * same for a provider-side move (the manual fixture's booking confirmed for the provider). The
 * Request log finds a `/v1` call by its `request_id`, Usage shows a bar per app and the same numbers
 * as a table, the sandbox resets after a confirmation.
 * Screenshots at 1280 and 390 px go to `CONSOLE_SHOTS_DIR`.
 */
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEvaluatorOnce } from '../../src/domain/appointments/evaluator.js';
import { ensureSandboxFixtures } from '../../src/domain/directory/sandbox-fixtures.js';
import { sandboxBookingOutcomes } from '../../src/domain/sandbox/booking-outcomes.js';
import { createWebhookWorker } from '../../src/webhooks/worker.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { authPath } from '../helpers/auth.js';
import { consoleEmail } from '../helpers/console.js';
import { scaled } from '../helpers/scale.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { consoleShot, openConsoleBrowser, signUpInConsole, type ConsoleBrowser } from './console-browser.js';

const shot = consoleShot;

describe('developer console tool views in Chromium', () => {
  let t: TestApp;
  let base: string;
  let browser: ConsoleBrowser;
  let page: Page;
  let rx: Receiver;
  /** The receiver's keys: the generated one joins once the page shows it. */
  const keys: string[] = [];
  const errors: string[] = [];
  const email = consoleEmail('tools');
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  let machine = { id: '', secret: '' };
  let appointmentId = '';

  beforeAll(async () => {
    t = await testApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', HOST: '127.0.0.1' });
    await t.db.transaction().execute((trx) => ensureSandboxFixtures(trx));
    base = await t.listen();
    rx = await startReceiver(keys);
    browser = await openConsoleBrowser(errors);
    page = await browser.newPage();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rx?.close();
    await t?.close();
  });

  const said = (text: string | RegExp) => page.locator('#status', { hasText: text }).waitFor();
  const sideways = (): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  const worker = () => createWebhookWorker(t.db, { env: 'sandbox', allowPrivateTargets: true, reflectPrivateAnswers: true, baseDelayMs: 10, maxDelayMs: 20 });
  const go = async (view: string) => {
    await page.locator(`#views a[data-view="${view}"]`).click();
    await page.locator(`#${view}-h`).waitFor();
  };

  it('signs up and reads the sandbox app secret once', async () => {
    await signUpInConsole(page, base, { email, password });
    await page.locator('#app-list a').first().click();
    const card = page.locator('[data-secret-for]');
    machine = { id: (await card.getAttribute('data-secret-for'))!, secret: await card.locator('input').inputValue() };
    expect(await page.locator('#views a').allTextContents()).toEqual(['Apps', 'Account', 'Webhooks', 'Request log', 'Usage', 'Sandbox']);
  });

  it('Webhooks: sets the receiver, shows the generated key once, and the receiver verifies the test event', async () => {
    await go('webhooks');
    await page.getByLabel('Receiver URL').fill('not a url');
    await page.getByRole('button', { name: 'Save receiver' }).click();
    await page.locator('#alert', { hasText: 'url' }).waitFor();
    await page.getByLabel('Receiver URL').fill(rx.url);
    await page.getByRole('button', { name: 'Save receiver' }).click();
    await said('Receiver saved');
    const key = await page.locator('#rx-key-value').inputValue();
    expect(Buffer.from(key, 'base64').length).toBeGreaterThanOrEqual(32);
    keys.push(key);
    expect(await page.locator('#rx-state').textContent()).toContain(rx.url);
    await page.getByRole('button', { name: 'Send test event' }).click();
    const answer = page.locator('#rx-answer .card');
    await answer.waitFor();
    expect(await answer.textContent()).toMatch(/Test event delivered.*Status 200.*Answer: ok/);
    expect(rx.received).toHaveLength(1);
    expect(rx.received[0]!.verifiedWith).toEqual([key]);
    expect(await page.locator('#dl-table tbody tr').count()).toBe(1);
    expect(await page.locator('#recipe-code').textContent()).toContain("createHmac('sha256'");
    await page.screenshot({ path: shot('tools-webhooks-1280'), fullPage: true });
    // Seen again, the key is not shown.
    await page.reload();
    await page.locator('#rx-state', { hasText: rx.url }).waitFor();
    expect(await page.locator('#rx-key-value').count()).toBe(0);
  });

  it('Sandbox: runs the `failed` fixture; its webhook shows in the delivery log, filters find it, a replay sends the same webhook-id', async () => {
    await go('sandbox');
    const fixture = page.locator('[data-fixture="failed"]');
    await fixture.getByRole('button', { name: 'Run failed' }).click();
    await fixture.locator('.fx-result', { hasText: 'Booked' }).waitFor();
    appointmentId = (await fixture.locator('.fx-result code').textContent())!;
    await page.screenshot({ path: shot('tools-sandbox-1280'), fullPage: true });
    await runEvaluatorOnce(t.db, { env: 'sandbox', outcomes: sandboxBookingOutcomes });
    await worker().runOnce();
    const hooks = () => rx.received.filter((r) => (r.body as { data?: { appointment_data?: { appointment_id?: string } } }).data?.appointment_data?.appointment_id === appointmentId);
    expect(hooks()).toHaveLength(1);
    const webhookId = String(hooks()[0]!.headers['webhook-id']);

    await go('webhooks');
    await page.getByLabel('Appointment id').fill(appointmentId);
    await page.getByLabel('Delivery status').selectOption('delivered');
    await page.getByRole('button', { name: 'Filter' }).click();
    const rows = page.locator('#dl-table tbody tr');
    await page.locator('#dl-table tbody tr', { hasText: webhookId }).waitFor();
    // The unfiltered list (with the test event) may still show until the filtered one arrives.
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toMatch(/updated.*200 \(delivered\)/);
    await page.getByLabel('Delivery status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator('#dl-table tbody tr', { hasText: 'No deliveries yet.' }).waitFor();
    await page.getByLabel('Delivery status').selectOption('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('button', { name: `Replay ${webhookId}` }).click();
    await said(`Event ${webhookId} will be sent again`);
    await worker().runOnce();
    expect(hooks().map((h) => h.headers['webhook-id'])).toEqual([webhookId, webhookId]);
    expect(hooks()[1]!.verifiedWith).toEqual(keys);
    await page.locator('#rf-since').fill('2020-01-01T00:00');
    await page.getByRole('button', { name: 'Replay failed' }).click();
    await said('0 failed events will be sent again');
  });

  it('a provider-side move: the manual fixture booking, confirmed for the provider, shows in the delivery log and replays', async () => {
    await go('sandbox');
    const fixture = page.locator('[data-fixture="manual"]');
    await fixture.getByRole('button', { name: 'Run manual' }).click();
    await fixture.locator('.fx-result', { hasText: 'Booked' }).waitFor();
    const booked = (await fixture.locator('.fx-result code').textContent())!;
    // The provider's side confirms it (through the operator's move, as a practice's confirm would).
    const moved = await t.app.inject({
      method: 'POST', url: `/admin/v1/appointments/${booked}/transition`,
      headers: { authorization: 'Bearer test-admin-token-0123456789abcdefgh' }, payload: { to: 'confirmed' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    await worker().runOnce();
    const hooks = () => rx.received.filter((r) => (r.body as { data?: { appointment_data?: { appointment_id?: string } } }).data?.appointment_data?.appointment_id === booked);
    expect(hooks()).toHaveLength(1);
    expect(hooks()[0]!.verifiedWith).toEqual(keys);
    const webhookId = String(hooks()[0]!.headers['webhook-id']);
    await go('webhooks');
    await page.getByLabel('Appointment id').fill(booked);
    await page.getByLabel('Delivery status').selectOption('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator('#dl-table tbody tr', { hasText: webhookId }).waitFor();
    await page.getByRole('button', { name: `Replay ${webhookId}` }).click();
    await said(`Event ${webhookId} will be sent again`);
    await worker().runOnce();
    expect(hooks().map((h) => h.headers['webhook-id'])).toEqual([webhookId, webhookId]);
  });

  it('Request log finds a /v1 call by request_id; Usage shows a bar per app, the same as a table, and the rate-limit headroom', async () => {
    const token = await fetch(`${base}${authPath(t)}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: machine.id, client_secret: machine.secret, audience: t.config.audience }),
    }).then(async (r) => ((await r.json()) as { access_token: string }).access_token);
    const call = await fetch(`${base}/v1/appointments/ap_missing_tools`, { headers: { authorization: `Bearer ${token}` } });
    expect(call.status).toBe(404);
    const requestId = call.headers.get('x-request-id')!;
    await go('logs');
    await page.getByLabel('Request id').fill(requestId);
    // The request log is written by a buffered flush: search until it shows.
    const row = page.locator('#rl-table tbody tr', { hasText: requestId });
    const deadline = Date.now() + scaled(5000);
    for (;;) {
      await page.getByRole('button', { name: 'Search' }).click();
      await page.locator('#rl-table tbody tr').first().waitFor();
      if ((await row.count()) === 1) break;
      if (Date.now() > deadline) throw new Error('request log not flushed');
      await page.waitForTimeout(100);
    }
    expect(await page.locator('#rl-table tbody tr').count()).toBe(1);
    expect(await row.textContent()).toMatch(/GET \/v1\/appointments\/.*404/);
    await page.getByLabel('Request id').fill('');
    await page.getByLabel('Response status').selectOption('error');
    await page.getByRole('button', { name: 'Search' }).click();
    await row.waitFor();
    await page.screenshot({ path: shot('tools-logs-1280'), fullPage: true });

    await go('usage');
    const bar = page.locator('#usage-chart meter').first();
    await bar.waitFor();
    expect(Number(await bar.getAttribute('value'))).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#rate meter').count()).toBe(1);
    // The chart's bars are per app; the table says the same in text, with the client's share.
    const appName = (await page.locator('#usage-chart .bar-label').first().textContent())!;
    const first = page.locator('#usage-table tbody tr').first();
    expect(await first.locator('td').first().textContent()).toBe(appName);
    expect(await first.textContent()).toContain(machine.id);
    expect(await page.locator('#rate-apps').textContent()).toContain(appName);
    await page.screenshot({ path: shot('tools-usage-1280'), fullPage: true });
  });

  it('fits a phone: every tool view at 390 px without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const view of ['webhooks', 'logs', 'usage', 'sandbox']) {
      await go(view);
      await page.waitForTimeout(200);
      expect(await sideways(), view).toBeLessThanOrEqual(0);
      await page.screenshot({ path: shot(`tools-${view}-390`), fullPage: true });
    }
  });

  it('Sandbox: reset asks first, then shows what went', async () => {
    await page.getByRole('button', { name: 'Reset sandbox' }).click();
    await page.locator('#confirm').getByRole('button', { name: 'Keep it' }).click();
    expect(await page.locator('#reset-counts').textContent()).toBe('');
    await page.getByRole('button', { name: 'Reset sandbox' }).click();
    await page.locator('#confirm').getByRole('button', { name: 'Reset', exact: true }).click();
    await said('Your sandbox is reset');
    // The failed fixture's booking and the confirmed manual one.
    expect(await page.locator('#reset-counts').textContent()).toMatch(/Appointments2Patients2/);
    // The one refusal: the bad receiver URL (400).
    expect(errors.filter((e) => !(/400/.test(e) && /\/webhook\b/.test(e)))).toEqual([]);
  });
});
