/**
 * Helpers of the practice workspace's browser test (test/browser/practice.test.ts): Chromium, the
 * developer's side through the real `/v1` over HTTP, the calendar's navigation as a user drives it,
 * and where screenshots go.
 */
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DateTime } from 'luxon';
import type { BrowserContext, Page } from 'playwright-core';
import { rangeLiteral } from '../../src/domain/appointments/holds.js';
import { createBody, slots } from '../appointments/fixtures.js';
import type { TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/auth.js';
import { scaled } from '../helpers/scale.js';
import { launchChromium } from './chromium.js';

/** Where the screenshots go: `PRACTICE_SHOTS_DIR`, else a folder in the temp directory. */
export const SHOTS_DIR = process.env.PRACTICE_SHOTS_DIR ?? join(tmpdir(), 'carebook-practice-shots');
mkdirSync(SHOTS_DIR, { recursive: true });
export const shot = (name: string): string => join(SHOTS_DIR, `${name}.png`);

/** Debian's Chromium, headless, with a fresh profile in `userDataDir`. */
export function launch(userDataDir: string): Promise<BrowserContext> {
  return launchChromium(userDataDir);
}

/** Polls `cond` until it holds (a condition outside the page: a webhook received, a row written). */
export async function until(what: string, cond: () => Promise<boolean> | boolean, ms = scaled(10_000)): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The local date `days` from today in `zone`. */
export const localDay = (zone: string, days: number): string => DateTime.now().setZone(zone).plus({ days }).toISODate()!;

/** The developer's side: books and reads through `/v1` over the running server. */
export function developer(t: TestApp, base: string, token: string) {
  const headers = { ...bearer(token), 'content-type': 'application/json' };
  return {
    /** Start times `/v1` availability offers at `pl` on local date `date` (30-minute visit, new patient). */
    starts: async (pl: string, date: string): Promise<string[]> => (await slots({ t, token }, pl, { start: date, end: date })).map((s) => s.start_time),
    /** Books `start` at `pl`; returns the appointment id. */
    async book(pl: string, start: string, patient: Record<string, unknown> = {}): Promise<string> {
      const res = await fetch(`${base}/v1/appointments`, { method: 'POST', headers, body: JSON.stringify(createBody(pl, start, {}, patient)) });
      const body = (await res.json()) as { data: { appointment_id: string } };
      if (res.status !== 200) throw new Error(`booking ${res.status} ${JSON.stringify(body)}`);
      return body.data.appointment_id;
    },
    /** The appointment as the developer reads it. */
    async read(id: string): Promise<Record<string, unknown>> {
      const res = await fetch(`${base}/v1/appointments/${id}`, { headers: bearer(token) });
      if (res.status !== 200) throw new Error(`read ${res.status}`);
      return ((await res.json()) as { data: Record<string, unknown> }).data;
    },
  };
}

/**
 * The operator settles a booking at once (`POST /admin/v1/appointments/{id}/transition`): without the
 * evaluator job running, a booking at an automatic-confirmation location stays `pending_booking`.
 */
export async function operatorConfirm(t: TestApp, base: string, id: string): Promise<void> {
  const res = await fetch(`${base}/admin/v1/appointments/${id}/transition`, {
    method: 'POST', headers: { ...bearer(String(t.config.adminToken)), 'content-type': 'application/json' }, body: JSON.stringify({ to: 'confirmed' }),
  });
  if (res.status !== 200) throw new Error(`transition ${res.status} ${await res.text()}`);
}

/**
 * Moves an appointment's start to `minutesAgo` before now (its held time with it; 30 minutes long),
 * so that `no_show` is allowed: the API records a no-show only from the start time on, and a booking
 * cannot be made in the past. Direct database write; the test says so where it uses it. Returns the
 * start's local date in `zone`.
 */
export async function startPassed(t: TestApp, id: string, zone: string, minutesAgo: number): Promise<string> {
  const start = new Date(Date.now() - minutesAgo * 60_000);
  const end = new Date(start.getTime() + 30 * 60_000);
  await t.db.updateTable('appointments').set({ start_time: start, end_time: end }).where('id', '=', id).execute();
  await t.db.updateTable('appointment_holds').set({ during: rangeLiteral(start, end) }).where('appointment_id', '=', id).where('kind', '=', 'current').execute();
  return DateTime.fromJSDate(start).setZone(zone).toISODate()!;
}

/** Drives the calendar's own controls to provider `providerId`, `view`, and the day or week of `date`. */
export async function showCalendar(page: Page, opts: { providerId: string; date: string; view: 'day' | 'week'; zone: string }): Promise<void> {
  if (!(await page.locator('#calendar').isVisible())) await page.getByRole('link', { name: 'Calendar' }).click();
  if ((await page.locator('#cal-provider').inputValue()) !== opts.providerId) await page.locator('#cal-provider').selectOption(opts.providerId);
  await page.locator('#cal-controls').getByLabel(opts.view === 'day' ? 'Day' : 'Week', { exact: true }).check();
  await page.getByRole('button', { name: 'Today' }).click();
  const today = DateTime.now().setZone(opts.zone).startOf('day');
  const target = DateTime.fromISO(opts.date, { zone: opts.zone });
  const steps = opts.view === 'day'
    ? Math.round(target.diff(today, 'days').days)
    : Math.round(target.startOf('week').diff(today.startOf('week'), 'weeks').weeks);
  for (let i = 0; i < Math.abs(steps); i++) await page.getByRole('button', { name: steps > 0 ? 'Next' : 'Previous' }).click();
  await page.locator(`#cal-days.${opts.view} section.day[data-date="${opts.date}"]`).waitFor();
  await page.locator(`#cal-days.${opts.view} section.day`).first().waitFor();
}

/** Horizontal overflow of the page in CSS pixels (0 when nothing scrolls sideways). */
export const sideways = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
