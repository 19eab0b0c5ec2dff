/** Debian's Chromium for the browser tests (playwright-core drives the system browser: `apt-get install chromium`). */
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium, headless, with a fresh profile in `userDataDir` (JavaScript off with `javaScriptEnabled: false`). */
export function launchChromium(userDataDir: string, opts: { javaScriptEnabled?: boolean } = {}): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    ...opts,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
