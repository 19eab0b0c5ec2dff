/**
 * A developer's first hour with the developer console, in one Chromium session against a real server
 * (docs/console.md, "The console pages", "Webhooks"; docs/decisions/0015-developer-console.md): signs
 * up on the real sign-in page; creates an app (its secret shown once); adds the booking demo's
 * callback as the app's redirect URI, after which `/demo` signs in with that app's user client; runs
 * the demo as a patient would (patient sign-up, consent, search, book) with PKCE; sets the webhook
 * receiver to a real local receiver (the generated key shown once, a test event verified with it);
 * the practice moves the appointment to another time in the practice workspace (a provider-side move);
 * the signed webhook arrives, shows in the delivery log, and a replay from the log arrives at the
 * receiver a second time with the same `webhook-id`; Usage shows the app's calls. The delivery job
 * runs as `serve` runs it; the evaluator settles the booking as the service would. Screenshots of
 * each step go to `CONSOLE_SHOTS_DIR` (default: a folder in the temp directory), named
 * `journey-NN-*.png`. The split tests (console.test.ts, console-tools.test.ts) check each step's
 * details; this one checks that the steps make one journey.
 */
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { DateTime } from 'luxon';
import type { Page } from 'playwright-core';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEvaluatorOnce } from '../../src/domain/appointments/evaluator.js';
import { ensureSandboxFixtures } from '../../src/domain/directory/sandbox-fixtures.js';
import { sandboxBookingOutcomes } from '../../src/domain/sandbox/booking-outcomes.js';
import { startLoop, type RunningLoop } from '../../src/jobs/loop.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { authPath } from '../helpers/auth.js';
import { consoleEmail } from '../helpers/console.js';
import { engineName } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { consoleShot, openConsoleBrowser, signUpInConsole, type ConsoleBrowser } from './console-browser.js';
import { showCalendar, until } from './practice-helpers.js';

const APP_NAME = 'Journey booking app';

type Hook = { event_type?: string; data?: { appointment_data?: { appointment_id?: string; appointment_update_type?: string; changed_attributes?: { attribute_path: string }[] } } };

describe(`the developer console journey in one browser session (${engineName})`, () => {
  let t: TestApp;
  let base: string;
  let browser: ConsoleBrowser;
  let rx: Receiver;
  let delivery: RunningLoop;
  /** The receiver's key: the one the console generates, once it shows it. */
  const keys: string[] = [];
  const errors: string[] = [];
  let step = 0;

  beforeAll(async () => {
    t = await testApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', HOST: '127.0.0.1' });
    await t.db.transaction().execute((trx) => ensureSandboxFixtures(trx));
    base = await t.listen();
    rx = await startReceiver(keys);
    // The webhook delivery job, as `carebook serve` runs it (a short poll for the test).
    delivery = startLoop(
      webhookDeliveryJob({ db: t.db, config: { ...t.config, allowPrivateWebhookTargets: true, webhookRetryBaseMs: 20, workerPollMs: 50 }, engine: t.handle.engine }),
      pino({ level: 'silent' }),
    );
    browser = await openConsoleBrowser(errors);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await delivery?.stop();
    await rx?.close();
    await t?.close();
  });

  const newPage = (): Promise<Page> => browser.newPage();
  const shot = (p: Page, name: string) => p.screenshot({ path: consoleShot(`journey-${String(++step).padStart(2, '0')}-${name}`), fullPage: true });
  /** A /v1 call with the app's machine credential, as the developer's own backend would make it. */
  const v1 = async (token: string, path: string): Promise<Record<string, unknown>> => {
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { data: Record<string, unknown> }).data;
  };

  it('sign up → create an app → add a redirect URI → the PKCE demo against it → a webhook to a real receiver → a provider-side move → the delivery in the log → replayed to the receiver', async () => {
    const dev = { email: consoleEmail('journey'), password: `pw-${randomBytes(9).toString('base64url')}` };
    const console_ = await newPage();
    const said = (text: string | RegExp) => console_.locator('#status', { hasText: text }).waitFor();
    const go = async (view: string) => {
      await console_.locator(`#views a[data-view="${view}"]`).click();
      await console_.locator(`#${view}-h`).waitFor();
    };

    // 1. Sign up on the real sign-in page of the console client; back on the console, signed in.
    await signUpInConsole(console_, base, dev);
    await console_.locator('#app-list > li').first().waitFor();
    expect(await console_.locator('#who').textContent()).toBe(dev.email);
    await shot(console_, 'signed-up');

    // 2. Create an app: its machine secret is shown once.
    await console_.getByLabel('Name', { exact: true }).fill(APP_NAME);
    await console_.getByRole('button', { name: 'Create app' }).click();
    await said(`App ${APP_NAME} created.`);
    const secretCard = console_.locator('#new-app-secret [data-secret-for]');
    const machine = { id: (await secretCard.getAttribute('data-secret-for'))!, secret: await secretCard.locator('input').inputValue() };
    expect(await secretCard.textContent()).toContain('Shown once.');
    await shot(console_, 'app-created');

    // 3. The app's user client gets the booking demo's callback as its redirect URI.
    const demoCallback = `${base}/demo/callback`;
    expect((await fetch(`${base}/demo`)).status).toBe(404); // no client has the demo's callback yet
    await console_.locator('#app-list a', { hasText: APP_NAME }).click();
    const user = console_.locator('[data-kind="user"]');
    await user.waitFor();
    const userClientId = (await user.getAttribute('data-client-id'))!;
    await user.getByRole('button', { name: 'Add a redirect URI' }).click();
    await user.getByLabel('Redirect URI 1', { exact: true }).fill(demoCallback);
    await user.getByRole('button', { name: 'Save redirect URIs' }).click();
    await said('Redirect URIs saved');
    await shot(console_, 'redirect-uri-added');

    // The developer's backend: a token of the new app, and a provider of their sandbox directory that
    // takes new patients and confirms bookings automatically.
    const tokenRes = await fetch(`${base}${authPath(t)}/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: machine.id, client_secret: machine.secret, audience: t.config.audience }),
    });
    expect(tokenRes.status).toBe(200);
    const token = ((await tokenRes.json()) as { access_token: string }).access_token;
    const entities = (await v1(token, '/v1/schedulable_entities?page_size=100')).schedulable_entities as { id: string; main_specialty_id?: string; new_patient_availability: { next_28_days: string } }[];
    const auto = new Set((await t.db.selectFrom('provider_locations').select(['provider_id', 'location_id']).where('env', '=', 'sandbox').where('confirmation_type', '=', 'auto').execute()).map((r) => `${r.provider_id}|${r.location_id}`));
    const entity = entities.find((e) => e.id.startsWith('pr_c') && auto.has(e.id) && e.main_specialty_id && e.new_patient_availability.next_28_days === 'available');
    expect(entity, 'a provider of the developer\'s own directory copy with availability').toBeTruthy();
    const pl = await v1(token, `/v1/provider_locations/${encodeURIComponent(entity!.id)}`) as { provider: { full_name: string }; location: { zip_code: string; time_zone: string } };
    const providerId = entity!.id.split('|')[0]!;
    const practiceId = (await t.db.selectFrom('providers').select('practice_id').where('env', '=', 'sandbox').where('id', '=', providerId).executeTakeFirstOrThrow()).practice_id;

    // 4. The booking demo now signs in with that app's user client: a patient signs up, allows, books.
    const demo = await newPage();
    await demo.goto(`${base}/demo`);
    expect(await demo.locator('body').getAttribute('data-client-id')).toBe(userClientId);
    await demo.getByRole('button', { name: 'Sign in to book' }).click();
    await demo.waitForURL(/\/auth\/authorize/);
    const authorizeUrl = new URL(demo.url());
    expect(Object.fromEntries(authorizeUrl.searchParams)).toMatchObject({ client_id: userClientId, redirect_uri: demoCallback, code_challenge_method: 'S256' });
    const patient = { email: consoleEmail('journey-patient'), password: `pw-${randomBytes(9).toString('base64url')}` };
    await demo.getByRole('link', { name: 'Create an account' }).click();
    await demo.getByLabel('E-mail address').fill(patient.email);
    await demo.locator('#password').fill(patient.password);
    await demo.locator('#password_confirm').fill(patient.password);
    await demo.getByRole('button', { name: 'Create account' }).click();
    await demo.getByLabel('Password').fill(patient.password);
    await demo.getByRole('button', { name: 'Sign in', exact: true }).click();
    await demo.waitForURL(/\/authorize\/consent/);
    await shot(demo, 'demo-consent');
    await demo.getByRole('button', { name: 'Allow' }).click();
    await demo.waitForURL(`${base}/demo`);
    await demo.getByRole('heading', { name: 'Find a provider' }).waitFor();
    await demo.getByLabel('ZIP code', { exact: true }).fill(pl.location.zip_code);
    await demo.getByLabel('Specialty').selectOption(entity!.main_specialty_id!);
    await demo.getByRole('button', { name: 'Search' }).click();
    const card = demo.getByRole('listitem').filter({ has: demo.getByRole('heading', { name: pl.provider.full_name }) }).first();
    await card.getByRole('button', { name: 'Show times' }).click();
    await card.locator('ul.times button').first().click();
    await demo.getByRole('heading', { name: 'Your details' }).waitFor();
    await demo.getByLabel('First name').fill('Jo');
    await demo.getByLabel('Last name').fill('Journey');
    await demo.getByLabel('Date of birth').fill('1985-06-15');
    await demo.getByLabel('Sex at birth').selectOption('female');
    await demo.getByLabel('Phone (10 digits)').fill('2125550188');
    await demo.getByLabel('E-mail').fill(patient.email);
    await demo.getByLabel('Street address').fill('1 Main St');
    await demo.getByLabel('City').fill('New York');
    await demo.getByLabel('State').fill('NY');
    await demo.getByLabel('Your ZIP code').fill('10001');
    const answer = demo.waitForResponse((r) => new URL(r.url()).pathname === '/v1/appointments' && r.request().method() === 'POST');
    await demo.getByRole('button', { name: 'Book appointment' }).click();
    await expect.poll(() => demo.getByRole('status').textContent()).toContain('Booked');
    // What the app got back.
    const booked = ((await (await answer).json()) as { data: { appointment_id: string; appointment_status: string } }).data;
    expect(booked.appointment_status).toBe('pending_booking');
    const appointmentId = booked.appointment_id;
    await shot(demo, 'demo-booked');
    // The service settles it (the evaluator, as the background job would); the patient sees it confirmed.
    await runEvaluatorOnce(t.db, { env: 'sandbox', outcomes: sandboxBookingOutcomes });
    await demo.reload();
    await demo.getByRole('list', { name: 'My appointments' }).getByText('confirmed').waitFor();
    await demo.close();

    // 5. Webhooks: the receiver URL, a generated key shown once, and a test event it verifies.
    await console_.bringToFront();
    await go('webhooks');
    await console_.getByLabel('Receiver URL').fill(rx.url);
    await console_.getByRole('button', { name: 'Save receiver' }).click();
    await said('Receiver saved');
    keys.push(await console_.locator('#rx-key-value').inputValue());
    await console_.getByRole('button', { name: 'Send test event' }).click();
    await console_.locator('#rx-answer .card', { hasText: 'Test event delivered' }).waitFor();
    expect(rx.received.map((r) => [(r.body as Hook).event_type, r.verifiedWith])).toEqual([['test', keys]]);
    await shot(console_, 'webhook-set');

    // 6. The provider's side: the practice's admin (made by the operator) moves the appointment to
    // another open time in the practice workspace.
    const staff = { email: consoleEmail('journey-staff'), password: `pw-${randomBytes(9).toString('base64url')}` };
    const admin = await fetch(`${base}/admin/v1/practices/${encodeURIComponent(practiceId)}/admins`, {
      method: 'POST', headers: { authorization: `Bearer ${String(t.config.adminToken)}`, 'content-type': 'application/json' }, body: JSON.stringify(staff),
    });
    expect(admin.status, await admin.clone().text()).toBe(201);
    const practice = await newPage();
    await practice.goto(`${base}/practice`);
    await practice.getByRole('button', { name: 'Sign in' }).click();
    await practice.getByLabel('E-mail address').fill(staff.email);
    await practice.getByLabel('Password').fill(staff.password);
    await practice.getByRole('button', { name: 'Sign in' }).click();
    await practice.locator('#calendar-h').waitFor();
    const zone = pl.location.time_zone;
    // The appointment's day, where the practice finds it in its calendar (read from the database: the
    // booking's answer does not repeat the time, and the developer's machine credential does not see
    // a booking a signed-in patient made).
    const start = (await t.db.selectFrom('appointments').select('start_time').where('id', '=', appointmentId).executeTakeFirstOrThrow()).start_time;
    const day = DateTime.fromJSDate(start, { zone }).toISODate()!;
    await showCalendar(practice, { providerId, date: day, view: 'day', zone });
    await practice.locator(`[data-appointment-id="${appointmentId}"]`).click();
    await practice.locator('#appt[open]:not([aria-busy])').waitFor();
    await practice.getByRole('button', { name: 'Move…' }).click();
    // The first open time of the appointment's day, or of a later day when none is left that day.
    let to = '';
    for (let ahead = 0; ahead < 7 && !to; ahead++) {
      if (ahead) await practice.locator('#move-date').fill(DateTime.fromISO(day).plus({ days: ahead }).toISODate()!);
      await practice.locator('#move-slot option').first().waitFor({ state: 'attached' });
      await expect.poll(() => practice.locator('#move-slot').evaluate((s) => (s as HTMLSelectElement).options.length)).toBeGreaterThan(0);
      const values = await practice.locator('#move-slot option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
      to = values.find((v) => v && DateTime.fromISO(v, { zone }).toMillis() !== start.getTime()) ?? '';
    }
    expect(to, 'an open time to move to').not.toBe('');
    await practice.locator('#move-slot').selectOption(to);
    await shot(practice, 'practice-move');
    await practice.getByRole('button', { name: 'Move appointment' }).click();
    await practice.locator('#status', { hasText: 'Appointment moved.' }).waitFor();
    await practice.close();

    // The delivery job sends the move's signed webhook to the receiver.
    const hooks = () => rx.received.filter((r) => (r.body as Hook).data?.appointment_data?.appointment_id === appointmentId);
    await until('the move\'s webhook', () => hooks().length === 1);
    const hook = hooks()[0]!;
    expect(hook.verifiedWith).toEqual(keys);
    expect((hook.body as Hook).data!.appointment_data!.changed_attributes!.map((c) => c.attribute_path)).toContain('appointment.start_time');
    const webhookId = String(hook.headers['webhook-id']);

    // 7. The delivery shows in the console's log; a replay from there arrives again, same webhook-id.
    await console_.bringToFront();
    await console_.getByLabel('Appointment id').fill(appointmentId);
    await console_.getByRole('button', { name: 'Filter' }).click();
    const row = console_.locator('#dl-table tbody tr', { hasText: webhookId });
    await row.waitFor();
    await expect.poll(() => console_.locator('#dl-table tbody tr').count()).toBe(1);
    expect(await row.textContent()).toMatch(/updated.*200 \(delivered\)/);
    await shot(console_, 'delivery-log');
    await console_.getByRole('button', { name: `Replay ${webhookId}` }).click();
    await said(`Event ${webhookId} will be sent again`);
    await until('the replayed webhook', () => hooks().length === 2);
    expect(hooks().map((h) => h.headers['webhook-id'])).toEqual([webhookId, webhookId]);
    expect(hooks()[1]!.verifiedWith).toEqual(keys);
    expect((hooks()[1]!.body as Hook).data).toEqual((hook.body as Hook).data);
    // The log shows the second attempt too.
    await console_.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => console_.locator('#dl-table tbody tr', { hasText: webhookId }).count()).toBe(2);
    await shot(console_, 'replayed');

    // 8. Usage: the new app's calls, its machine credential's and its patient's.
    await go('usage');
    const appRow = console_.locator('#usage-table tbody tr', { hasText: APP_NAME });
    await appRow.waitFor();
    expect(await appRow.textContent()).toContain(machine.id);
    expect(await appRow.textContent()).toContain(userClientId);
    await shot(console_, 'usage');
    expect(errors).toEqual([]);
    console.info(`console journey screenshots: ${dirname(consoleShot('x'))}/journey-*.png`);
  }, 240_000);
});
