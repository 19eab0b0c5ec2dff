/**
 * The developer console's browser tests share this: Debian's Chromium with a fresh profile, pages that
 * collect our own pages' errors (console errors, 4xx/5xx answers, uncaught exceptions; the sign-in
 * pages have no favicon), screenshots into `CONSOLE_SHOTS_DIR` (default: a folder in the temp
 * directory), and signing up for a console account through the real pages.
 */
import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { scaled } from '../helpers/scale.js';
import { launchChromium } from './chromium.js';

const SHOTS_DIR = process.env.CONSOLE_SHOTS_DIR ?? join(tmpdir(), 'carebook-console-shots');
mkdirSync(SHOTS_DIR, { recursive: true });

/** The path of screenshot `name` in `CONSOLE_SHOTS_DIR`. */
export const consoleShot = (name: string): string => join(SHOTS_DIR, `${name}.png`);

export interface ConsoleBrowser {
  context: BrowserContext;
  /** A page at 1280 × 900 whose errors go to the array given to `openConsoleBrowser`. */
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** Launches Chromium with a fresh profile; every page it opens reports its errors into `errors`. */
export async function openConsoleBrowser(errors: string[]): Promise<ConsoleBrowser> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'carebook-chromium-'));
  const context = await launchChromium(userDataDir);
  const ours = (url: string): boolean => !/\/authorize|\/favicon\.ico$/.test(url);
  return {
    context,
    async newPage() {
      const p = await context.newPage();
      p.setDefaultTimeout(scaled(10_000));
      await p.setViewportSize({ width: 1280, height: 900 });
      p.on('console', (m) => m.type() === 'error' && ours(m.location().url) && errors.push(`${m.text()} (${m.location().url})`));
      p.on('response', (r) => r.status() >= 400 && ours(r.url()) && errors.push(`${r.status()} ${r.url()}`));
      p.on('pageerror', (err) => errors.push(err.message));
      return p;
    },
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Signs up for a console account from `{base}/console` through the sign-up and sign-in pages; ends on the console. */
export async function signUpInConsole(page: Page, base: string, login: { email: string; password: string }): Promise<void> {
  await page.goto(`${base}/console`);
  await page.getByRole('button', { name: 'Create a developer account' }).click();
  await page.waitForURL(/\/authorize\?/);
  await page.getByRole('link', { name: 'Create a developer account' }).click();
  await page.getByLabel('E-mail address').fill(login.email);
  await page.locator('#password').fill(login.password);
  await page.locator('#password_confirm').fill(login.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByLabel('Password').fill(login.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}
