/**
 * The practice workspace at /practice in real Chromium over a real server (docs/practice-guide.md,
 * docs/decisions/0014-practice-workspace.md): the page under a strict CSP in every environment; then
 * a practice's day end to end: a staff member signs in on the real sign-in page (no consent page), a
 * developer's `/v1` booking shows in the calendar without a reload, staff confirm it and the
 * developer's own webhook receiver gets the signed event, then decline, cancel with a provider reason,
 * move, arrived and no-show, and weekly hours, time off and a visit reason's length changed in the Schedule view, each checked
 * in `/v1` availability at once. Screenshots (calendar day and week at 1280 and 390 px, the panel, the
 * schedule) go to `SHOTS_DIR` (practice-helpers.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { startLoop, type RunningLoop } from '../../src/jobs/loop.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery.js';
import { setWebhookEndpoint } from '../../src/webhooks/endpoints.js';
import { PL, schedulingEnv, type SchedulingEnv } from '../appointments/fixtures.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { PRACTICE_A, practiceMember, type PracticeLogin } from '../helpers/practice.js';
import { scaled } from '../helpers/scale.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { developer, launch, localDay, shot, showCalendar, sideways, operatorConfirm, startPassed, until } from './practice-helpers.js';

const NY = 'America/New_York';
const PHX = 'America/Phoenix';
const HNL = 'Pacific/Honolulu';

describe('practice workspace in Chromium', () => {
  let e: SchedulingEnv;
  let t: TestApp;
  let base: string;
  let context: BrowserContext;
  let userDataDir: string;
  let rx: Receiver;
  let delivery: RunningLoop;
  let member: PracticeLogin;
  let dev: ReturnType<typeof developer>;
  let page: Page;
  const hookKey = randomBytes(32).toString('base64');
  const errors: string[] = [];

  beforeAll(async () => {
    e = await schedulingEnv();
    t = e.t;
    base = await t.listen();
    dev = developer(t, base, e.token);
    // A staff login of practice pt_t (every PL.* of the fixture is its), made as an admin would.
    member = await practiceMember(t, { practiceId: PRACTICE_A, role: 'practice_admin' });
    // The booking developer's own webhook receiver, and the delivery job as `serve` runs it.
    rx = await startReceiver([hookKey]);
    await setWebhookEndpoint(t.db, { env: 'sandbox', developerId: e.dev.developer_id, url: rx.url, key: hookKey, allowPrivateTargets: true });
    delivery = startLoop(
      webhookDeliveryJob({ db: t.db, config: { ...t.config, allowPrivateWebhookTargets: true, webhookRetryBaseMs: 20, workerPollMs: 50 }, engine: t.handle.engine }),
      pino({ level: 'silent' }),
    );
    userDataDir = await mkdtemp(join(tmpdir(), 'carebook-chromium-'));
    context = await launch(userDataDir);
  });
  afterAll(async () => {
    await context?.close();
    await delivery?.stop();
    await rx?.close();
    await e?.close();
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
  });

  async function newPage(viewport: { width: number; height: number }): Promise<Page> {
    const p = await context.newPage();
    p.setDefaultTimeout(scaled(10_000));
    await p.setViewportSize(viewport);
    // Errors of the workspace's own pages (the sign-in page has no favicon: its 404 is not ours).
    p.on('console', (m) => m.type() === 'error' && !/\/authorize|\/favicon\.ico$/.test(m.location().url) && errors.push(`${m.text()} (${m.location().url})`));
    p.on('response', (r) => r.status() >= 400 && !r.url().endsWith('/favicon.ico') && !/\/authorize/.test(r.url()) && errors.push(`${r.status()} ${r.url()}`));
    p.on('pageerror', (err) => errors.push(err.message));
    return p;
  }

  /** The page's polite status message once it reads `text`. */
  const said = (text: string) => page.locator('#status', { hasText: text }).waitFor();
  /** Opens an appointment's panel from the calendar and waits for its full read. */
  async function openPanel(id: string): Promise<void> {
    await page.locator(`[data-appointment-id="${id}"]`).click();
    await page.locator('#appt[open]:not([aria-busy])').waitFor();
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
    // Small: the first view needs little.
    expect((await (await fetch(`${base}/practice/app.js`)).text()).length).toBeLessThan(60_000);
  });

  it('is served in production too, with the production client', async () => {
    const prod = await testApp({ APP_ENV: 'production' });
    try {
      const res = await prod.app.inject({ url: '/practice' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('data-client-id="practice-workspace"');
      expect((await prod.app.inject({ url: '/practice/app.js' })).statusCode).toBe(200);
    } finally {
      await prod.close();
    }
  });

  it('refuses a sign-in callback this tab did not start, and fits a phone', async () => {
    const p = await newPage({ width: 390, height: 844 });
    await p.goto(`${base}/practice/callback?code=x&state=y`);
    await p.locator('#alert', { hasText: /not started (in this tab|by this app)/ }).waitFor();
    expect(p.url()).toBe(`${base}/practice`);
    await p.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await sideways(p)).toBeLessThanOrEqual(0);
    await p.close();
  });

  it('a staff member signs in on the real sign-in page with PKCE and no consent page', async () => {
    page = await newPage({ width: 1280, height: 900 });
    const visited: string[] = [];
    page.on('framenavigated', (f) => f === page.mainFrame() && visited.push(new URL(f.url()).pathname));
    await page.goto(`${base}/practice`);
    // Keyboard: the skip link first.
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/authorize\?/);
    const url = new URL(page.url());
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: 'practice-workspace-sandbox', redirect_uri: `${t.config.publicBaseUrl}/practice/callback`, code_challenge_method: 'S256', response_type: 'code',
    });
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['practice.read', 'practice.write', 'practice.admin', 'offline_access']));
    await page.getByLabel('E-mail address').fill(member.email);
    await page.getByLabel('Password').fill(member.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#calendar-h').waitFor();
    expect(await page.locator('#who').textContent()).toBe(member.email);
    expect(await page.locator('#practice-name').textContent()).toBe('Test practice');
    // Straight back from the sign-in form to the workspace: no consent page in between.
    const afterForm = visited.slice(visited.lastIndexOf('/auth/authorize') + 1);
    expect(afterForm).toEqual(['/practice/callback', '/practice'].slice(0, afterForm.length));
    expect(page.url()).toBe(`${base}/practice`);
    // An administrator sees every view.
    for (const name of ['Calendar', 'Schedule', 'Staff']) expect(await page.getByRole('link', { name }).isVisible()).toBe(true);
  });

  let confirmedId = '';
  const bookDay = localDay(NY, 2);

  it('a developer\'s /v1 booking shows in the open calendar within 2 s, without a reload', async () => {
    await showCalendar(page, { providerId: 'pr_man', date: bookDay, view: 'day', zone: NY });
    await page.locator('#live-state', { hasText: 'Live' }).waitFor();
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    const start = (await dev.starts(PL.manual, bookDay))[0]!;
    confirmedId = await dev.book(PL.manual, start, { first_name: 'Ada', last_name: 'Lovelace' });
    const booked = Date.now();
    const button = page.locator(`[data-appointment-id="${confirmedId}"]`);
    await button.waitFor({ timeout: scaled(2_000) });
    expect(Date.now() - booked).toBeLessThan(scaled(2_000));
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect(await button.textContent()).toContain('Ada Lovelace');
    expect(await button.textContent()).toContain('pending booking');
    await page.locator('#status', { hasText: '1 new booking' }).waitFor();
  });

  it('staff confirm it in the panel; the developer\'s receiver gets the signed webhook and /v1 reads confirmed', async () => {
    await openPanel(confirmedId);
    expect(await page.locator('#appt-h').textContent()).toContain('Ada Lovelace');
    expect(await page.locator('#appt-details').textContent()).toContain('ada@example.org');
    expect(await page.locator('#appt-actions button').allTextContents()).toEqual(['Confirm', 'Decline', 'Cancel…']);
    await page.screenshot({ path: shot('appointment-panel-1280') });
    await page.getByRole('button', { name: 'Confirm' }).click();
    await said('Appointment confirmed.');
    await page.locator('#appt-details', { hasText: 'confirmed' }).waitFor();
    await page.locator('#appt-history', { hasText: 'confirm' }).waitFor();

    await until('the confirmation webhook', () => rx.received.some((r) => (r.body as Hook).data.appointment_data.appointment_id === confirmedId));
    const hook = rx.received.find((r) => (r.body as Hook).data.appointment_data.appointment_id === confirmedId)!;
    expect(hook.verifiedWith).toEqual([hookKey]);
    expect((hook.body as Hook).data.appointment_data).toMatchObject({ appointment_update_type: 'updated', changed_attributes: [{ attribute_path: 'appointment.status' }] });
    expect((await dev.read(confirmedId)).appointment_status).toBe('confirmed');
    // The calendar behind the panel shows it too.
    await page.locator(`[data-appointment-id="${confirmedId}"]`, { hasText: 'confirmed' }).waitFor();
  });

  it('move: to another open time of the day, settled at once, the old time free again in /v1', async () => {
    const before = (await dev.read(confirmedId)).start_time as string;
    await page.getByRole('button', { name: 'Move…' }).click();
    await page.locator('#move-slot option:not([value=""])').first().waitFor({ state: 'attached' });
    expect(await page.locator('#move-date').inputValue()).toBe(bookDay);
    const options = await page.locator('#move-slot option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    const target = options.find((v) => v && Date.parse(v) !== Date.parse(before))!;
    expect(target).toBeTruthy();
    await page.locator('#move-slot').selectOption(target);
    await page.getByRole('button', { name: 'Move appointment' }).click();
    await said('Appointment moved.');
    await page.locator('#appt-details', { hasText: 'rescheduled' }).waitFor();
    const after = await dev.read(confirmedId);
    expect(after.appointment_status).toBe('rescheduled');
    expect(Date.parse(after.start_time as string)).toBe(Date.parse(target));
    expect((await dev.starts(PL.manual, bookDay)).map(Date.parse)).toContain(Date.parse(before));
  });

  it('cancel with a provider reason', async () => {
    await page.getByRole('button', { name: 'Cancel…' }).click();
    await page.getByLabel('Reason', { exact: true }).selectOption('provider_not_available');
    await page.getByRole('button', { name: 'Cancel appointment' }).click();
    await said('Appointment cancelled.');
    // The page says so, then reads the appointment again and shows it without actions.
    await expect.poll(() => page.locator('#appt-actions button').count(), { timeout: 10_000 }).toBe(0);
    expect(await dev.read(confirmedId)).toMatchObject({ appointment_status: 'cancelled', cancellation_reason_type: 'provider_not_available' });
    await page.keyboard.press('Escape');
    await page.locator('#appt:not([open])').waitFor({ state: 'attached' });
  });

  it('decline another booking waiting for the provider', async () => {
    const start = (await dev.starts(PL.manual, bookDay))[3]!;
    const id = await dev.book(PL.manual, start, { first_name: 'Grace', last_name: 'Hopper' });
    await page.locator(`[data-appointment-id="${id}"]`).waitFor({ timeout: scaled(2_000) });
    await openPanel(id);
    await page.getByRole('button', { name: 'Decline' }).click();
    await said('Booking declined.');
    expect((await dev.read(id)).appointment_status).toBe('booking_failed');
    await page.getByRole('button', { name: 'Close' }).click();
    // A third booking stays waiting, for the screenshots.
    await dev.book(PL.manual, (await dev.starts(PL.manual, bookDay))[6]!, { first_name: 'Katherine', last_name: 'Johnson' });
  });

  it('arrived and no-show, from the start time on (start times moved to just before now in the database)', async () => {
    const day = localDay(NY, 3);
    const starts = await dev.starts(PL.ny2, day);
    const cameId = await dev.book(PL.ny2, starts[0]!, { first_name: 'Alan', last_name: 'Turing' });
    const awayId = await dev.book(PL.ny2, starts[4]!, { first_name: 'Edsger', last_name: 'Dijkstra' });
    for (const id of [cameId, awayId]) await operatorConfirm(t, base, id);
    // A booking cannot start in the past and a no-show counts only from the start time: set up directly.
    const cameDay = await startPassed(t, cameId, NY, 5);
    const awayDay = await startPassed(t, awayId, NY, 40);
    await showCalendar(page, { providerId: 'pr_ny2', date: cameDay, view: 'day', zone: NY });

    await openPanel(cameId);
    await page.getByRole('button', { name: 'Mark arrived' }).click();
    await said('Patient marked arrived.');
    await page.locator('#appt-details', { hasText: 'confirmed, arrived' }).waitFor();
    expect(await page.getByRole('button', { name: 'Mark arrived' }).count()).toBe(0);
    expect((await t.db.selectFrom('appointments').select('arrived_at').where('id', '=', cameId).executeTakeFirstOrThrow()).arrived_at).not.toBeNull();
    await page.getByRole('button', { name: 'Close' }).click();

    if (awayDay !== cameDay) await showCalendar(page, { providerId: 'pr_ny2', date: awayDay, view: 'day', zone: NY });
    await openPanel(awayId);
    await page.getByRole('button', { name: 'Mark no-show' }).click();
    await said('Patient marked as a no-show.');
    expect((await dev.read(awayId)).appointment_status).toBe('no_show');
    await page.getByRole('button', { name: 'Close' }).click();
    await page.locator(`[data-appointment-id="${awayId}"]`, { hasText: 'no show' }).waitFor();
  });

  it('calendar screenshots: day and week at 1280 and 390 px, nothing scrolls sideways', async () => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width > 800 ? 900 : 844 });
      for (const view of ['week', 'day'] as const) {
        await showCalendar(page, { providerId: 'pr_man', date: bookDay, view, zone: NY });
        await page.locator(`[data-appointment-id]`).first().waitFor();
        expect(await sideways(page), `${view} at ${width}`).toBeLessThanOrEqual(0);
        await page.screenshot({ path: shot(`calendar-${view}-${width}`), fullPage: view === 'week' });
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('weekly hours in the Schedule view: a stranded booking is listed first; extended and closed hours show in /v1 availability at once', async () => {
    const day = localDay(PHX, 4);
    const dayName = new Date(`${day}T12:00:00Z`).toLocaleDateString('en-US', { weekday: 'long', timeZone: 'UTC' });
    const early = (await dev.starts(PL.phx, day)).find((s) => s.startsWith(`${day}T01:00`))!;
    expect(early).toBeTruthy();
    await dev.book(PL.phx, early, { first_name: 'Barbara', last_name: 'Liskov' });
    expect((await dev.starts(PL.phx, day)).some((s) => s.startsWith(`${day}T18:00`))).toBe(false);

    await page.getByRole('link', { name: 'Schedule' }).click();
    await page.locator('#sch-pl').selectOption(PL.phx);
    await page.getByLabel(`${dayName} block 2 until`).waitFor();
    expect([await page.getByLabel(`${dayName} block 1 from`).inputValue(), await page.getByLabel(`${dayName} block 2 until`).inputValue()]).toEqual(['00:00', '18:00']);
    await page.getByLabel(`${dayName} block 2 until`).fill('19:00');
    await page.getByRole('button', { name: `Remove ${dayName} block 1` }).click();
    await page.getByRole('button', { name: 'Save weekly hours' }).click();
    // The dry run lists the booking the change would leave outside the hours.
    await page.locator('#stranded:not([hidden])').waitFor();
    expect(await page.locator('#stranded-list li').count()).toBe(1);
    expect(await page.locator('#stranded-list').textContent()).toContain('1:00');
    await page.screenshot({ path: shot('schedule-stranded-1280'), fullPage: true });
    await page.getByRole('button', { name: 'Keep the current schedule' }).click();
    await said('Nothing was changed.');
    expect((await dev.starts(PL.phx, day)).some((s) => s.startsWith(`${day}T18:00`))).toBe(false);

    await page.getByRole('button', { name: 'Save weekly hours' }).click();
    await page.locator('#stranded:not([hidden])').waitFor();
    await page.getByRole('button', { name: 'Save anyway' }).click();
    await said('Weekly hours saved.');
    const now = await dev.starts(PL.phx, day);
    expect(now.some((s) => s.startsWith(`${day}T18:00`))).toBe(true);
    expect(now.some((s) => s.startsWith(`${day}T01:`))).toBe(false);
  });

  it('time off saved in the Schedule view closes the day in /v1 availability at once; removing it frees it again', async () => {
    const day = localDay(PHX, 5);
    expect((await dev.starts(PL.phx, day)).length).toBeGreaterThan(0);
    await page.getByLabel('First day', { exact: true }).fill(day);
    await page.getByLabel('Note', { exact: true }).fill('Training');
    await page.getByRole('button', { name: 'Add time off' }).click();
    await said('Time off added.');
    await page.locator('#off-list', { hasText: 'Training' }).waitFor();
    expect(await dev.starts(PL.phx, day)).toEqual([]);
    await page.screenshot({ path: shot('schedule-1280'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await sideways(page), 'schedule at 390').toBeLessThanOrEqual(0);
    await page.screenshot({ path: shot('schedule-390'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.getByRole('button', { name: /^Remove time off / }).click();
    await said('Time off removed.');
    expect((await dev.starts(PL.phx, day)).length).toBeGreaterThan(0);
    expect(errors, errors.join('\n')).toEqual([]);
  });

  it('a visit reason made longer in the Schedule view: the booking it would push into the next is listed first; /v1 availability follows at once', async () => {
    const day = localDay(HNL, 6);
    const before = await dev.starts(PL.hnl, day);
    const nine = before.find((s) => s.startsWith(`${day}T09:00`))!;
    const nineThirty = before.find((s) => s.startsWith(`${day}T09:30`))!;
    expect(before.some((s) => s.startsWith(`${day}T08:30`))).toBe(true);
    await dev.book(PL.hnl, nine, { first_name: 'Grace', last_name: 'Hopper' });
    await dev.book(PL.hnl, nineThirty, { first_name: 'Edsger', last_name: 'Dijkstra' });

    await page.getByRole('link', { name: 'Schedule' }).click();
    await page.locator('#sch-pl').selectOption(PL.hnl);
    const thirty = page.getByRole('group', { name: 'Thirty' });
    const newPatients = thirty.getByLabel('New patients (minutes)');
    await newPatients.waitFor();
    expect(await newPatients.inputValue()).toBe('30');
    expect(await thirty.getByLabel('Offered at this location').isChecked()).toBe(true);
    // By keyboard: type the new length, Enter submits the form.
    await newPatients.fill('');
    await newPatients.pressSequentially('60');
    await newPatients.press('Enter');
    await page.locator('#stranded:not([hidden])').waitFor();
    expect(await page.locator('#stranded-list li').count()).toBe(1);
    expect(await page.locator('#stranded-list').textContent()).toMatch(/9:00.*next booking/);
    await page.screenshot({ path: shot('schedule-visit-reasons-stranded-1280'), fullPage: true });
    await page.getByRole('button', { name: 'Save anyway' }).click();
    await said('Visit reasons saved.');
    await thirty.getByText('changed by your practice').waitFor();

    const after = await dev.starts(PL.hnl, day);
    expect(after.some((s) => s.startsWith(`${day}T08:00`))).toBe(true);
    expect(after.some((s) => s.startsWith(`${day}T08:30`))).toBe(false);
    expect(after.some((s) => s.startsWith(`${day}T10:30`))).toBe(false);
    expect(after.some((s) => s.startsWith(`${day}T11:00`))).toBe(true);

    await page.setViewportSize({ width: 390, height: 844 });
    expect(await sideways(page), 'visit reasons at 390').toBeLessThanOrEqual(0);
    await page.locator('#reasons').screenshot({ path: shot('schedule-visit-reasons-390') });
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(errors, errors.join('\n')).toEqual([]);
  });
});

interface Hook {
  data: { appointment_data: { appointment_id: string; appointment_update_type: string; changed_attributes: { attribute_path: string }[] } };
}
