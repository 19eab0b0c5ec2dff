/**
 * The developer console's extras in real Chromium over a real server (docs/console.md, "The console
 * pages"): the Webhooks view's signature recipe in Node.js, Python and Go (tabs, by mouse and keys,
 * each identical to docs/webhooks.md); "Try a call" builds the curl of `GET /v1/specialties` and the
 * token request, and both run for real with Node's fetch (URL, headers and body parsed out of the
 * text); the Operator view, with the admin token, lists the account's production request and grants it
 * (the Account view then says so), a wrong token shows the error, and a 404 (admin API on ADMIN_PORT)
 * says where it is. Every view fits 390 px. Screenshots go to `CONSOLE_SHOTS_DIR`.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.js';
import { consoleEmail } from '../helpers/console.js';
import { consoleShot, openConsoleBrowser, signUpInConsole, type ConsoleBrowser } from './console-browser.js';

const shot = consoleShot;
const ADMIN_TOKEN = 'test-admin-token-0123456789abcdefgh';

/** The three recipes as docs/webhooks.md has them. */
function docRecipes(): Record<string, string> {
  const doc = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  const block = (lang: string): string => new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(doc)![1]!.replace(/\n$/, '');
  return { node: block('js'), python: block('python'), go: block('go') };
}

describe('developer console extras in Chromium', () => {
  let t: TestApp;
  let base: string;
  let context: BrowserContext;
  let browser: ConsoleBrowser;
  let page: Page;
  const errors: string[] = [];
  const email = consoleEmail('extras');
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  let machine = { id: '', secret: '' };

  beforeAll(async () => {
    t = await testApp({ HOST: '127.0.0.1' });
    base = await t.listen();
    browser = await openConsoleBrowser(errors);
    context = browser.context;
    page = await browser.newPage();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const said = (text: string | RegExp) => page.locator('#status', { hasText: text }).waitFor();
  const sideways = (): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  const go = async (view: string) => {
    await page.locator(`a[data-view="${view}"]`).click();
    await page.locator(`#${view}-h`).waitFor();
  };

  it('signs up, reads the sandbox app secret once, and asks for production access', async () => {
    await signUpInConsole(page, base, { email, password });
    await page.locator('#app-list a').first().click();
    const card = page.locator('[data-secret-for]');
    machine = { id: (await card.getAttribute('data-secret-for'))!, secret: await card.locator('input').inputValue() };
    expect(await page.locator('#more-views a').allTextContents()).toEqual(['Try a call', 'Operator']);

    await go('account');
    await page.getByLabel('Company').fill('Extras Clinic Software');
    await page.getByLabel('What will you build?').fill('Booking from our patient app.');
    await page.getByRole('button', { name: 'Request production access' }).click();
    await page.locator('#prod-state', { hasText: 'waiting' }).waitFor();
  });

  it('Webhooks: the recipe switch shows Node.js, Python and Go, each as docs/webhooks.md has it', async () => {
    await go('webhooks');
    const want = docRecipes();
    const code = page.locator('#recipe-code code');
    expect(await code.textContent()).toBe(want.node);
    expect(await page.getByRole('tab', { name: 'Node.js' }).getAttribute('aria-selected')).toBe('true');
    await page.getByRole('tab', { name: 'Python' }).click();
    expect(await code.textContent()).toBe(want.python);
    expect(await page.locator('#recipe-code').getAttribute('aria-labelledby')).toBe('recipe-tab-python');
    // Keys: ArrowRight moves to Go and focuses it; End/Home; ArrowRight wraps round.
    await page.getByRole('tab', { name: 'Python' }).focus();
    await page.keyboard.press('ArrowRight');
    expect(await code.textContent()).toBe(want.go);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('recipe-tab-go');
    await page.keyboard.press('ArrowRight');
    expect(await code.textContent()).toBe(want.node);
    await page.keyboard.press('End');
    await page.screenshot({ path: shot('extras-webhooks-go-1280'), fullPage: true });
    expect(await page.getByRole('tab', { name: 'Go' }).getAttribute('aria-selected')).toBe('true');
    expect(await page.locator('#recipe-tabs [tabindex="0"]').count()).toBe(1);
    await page.keyboard.press('Home');
    expect(await code.textContent()).toBe(want.node);
  });

  it('Try a call: the curl of GET /v1/specialties and its token request run for real and answer 200', async () => {
    await go('try');
    await page.locator('#try-op option[value="get /v1/specialties"]').waitFor({ state: 'attached' });
    const groups = await page.locator('#try-op optgroup').evaluateAll((gs) => gs.map((g) => (g as HTMLOptGroupElement).label));
    expect(groups.length).toBeGreaterThan(1);
    const values = await page.locator('#try-op option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(values.every((v) => / \/v1\//.test(v))).toBe(true);
    await page.getByLabel('Operation').selectOption('get /v1/specialties');
    expect(await page.getByLabel('App', { exact: true }).inputValue()).toBe(machine.id);

    const tokenText = (await page.locator('#try-token').textContent())!;
    expect(tokenText).toContain(machine.id);
    expect(tokenText).toContain('$CLIENT_SECRET');
    expect(tokenText).not.toContain(machine.secret);
    const tokenUrl = /-X POST '([^']+)'/.exec(tokenText)![1]!;
    // The shell's '"$CLIENT_SECRET"' splice, done by hand.
    const tokenBody = /-d '(.*)' \|/.exec(tokenText)![1]!.replace(`'"$CLIENT_SECRET"'`, machine.secret);
    const tokenRes = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: tokenBody });
    expect(tokenRes.status).toBe(200);
    const token = ((await tokenRes.json()) as { access_token: string }).access_token;

    const curl = (await page.locator('#try-curl').textContent())!;
    const [, method, url] = /curl -s -X (\w+) '([^']+)'/.exec(curl)!;
    const headers = Object.fromEntries([...curl.matchAll(/-H "([^:]+): ([^"]+)"/g)].map((m) => [m[1]!, m[2]!.replace('$TOKEN', token)]));
    expect(method).toBe('GET');
    expect(url).toBe(`${base}/v1/specialties`);
    expect(headers).toEqual({ Authorization: `Bearer ${token}` });
    const res = await fetch(url!, { method, headers });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: unknown }).data).toBeTruthy();

    // A query parameter typed in lands in the URL; the copy button copies.
    await page.getByLabel('Operation').selectOption('get /v1/provider_locations');
    await page.getByLabel(/^zip_code/).fill('10001');
    expect(await page.locator('#try-curl').textContent()).toContain('zip_code=10001');
    // An operation with a JSON body: the reference's example goes in with -d; an empty path parameter stays a placeholder.
    const ref = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { example?: unknown }> } }>> };
    const [postPath, postOp] = Object.entries(ref.paths).filter(([p, item]) => p.startsWith('/v1/') && p.includes('{') && item.post?.requestBody?.content?.['application/json']).map(([p, item]) => [p, item.post!] as const)[0]!;
    await page.getByLabel('Operation').selectOption(`post ${postPath}`);
    for (const input of await page.locator('#try-params input[required]').all()) await input.fill('');
    const posted = (await page.locator('#try-curl').textContent())!;
    expect(posted).toContain(`-X POST '${base}${postPath}'`);
    const example = /-d '([\s\S]*)'$/.exec(posted)![1]!;
    expect(JSON.parse(example)).toEqual(postOp.requestBody!.content!['application/json']!.example);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await page.getByRole('button', { name: 'Copy both' }).click();
    await said('Copied');
    await page.screenshot({ path: shot('extras-try-1280'), fullPage: true });
  });

  it('Operator: a wrong admin token shows the error; the right one lists the request and grants it', async () => {
    await go('operator');
    await page.getByRole('button', { name: 'List requests' }).click();
    await page.locator('#op-alert', { hasText: 'token' }).waitFor();
    await page.getByLabel('Admin token').fill('not-the-admin-token');
    await page.getByRole('button', { name: 'List requests' }).click();
    await page.locator('#op-alert', { hasText: 'The admin token was refused' }).waitFor();

    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'List requests' }).click();
    const grant = page.getByRole('button', { name: `Grant ${email}` });
    await grant.waitFor();
    expect(await page.locator('#op-alert').textContent()).toBe('');
    await page.screenshot({ path: shot('extras-operator-1280'), fullPage: true });
    await grant.click();
    await said(`Production granted to ${email}`);
    // The page says so, then lists the requests again: the granted one leaves the list.
    await expect.poll(() => page.locator('#op-table tbody tr', { hasText: email }).count(), { timeout: 10_000 }).toBe(0);
    // Nothing of the token is kept by the page.
    expect(await page.evaluate(() => JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }) + document.cookie)).not.toContain(ADMIN_TOKEN);

    await go('account');
    await page.locator('#prod-state', { hasText: 'Production access is granted' }).waitFor();
  });

  it('Operator: a 404 from the list (admin API on its own port) says so', async () => {
    await page.route('**/admin/v1/production-requests*', (r) => r.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ errors: [{ code: 'not_found', message: 'Not found.' }] }) }));
    await go('operator');
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'List requests' }).click();
    await page.locator('#op-alert', { hasText: 'ADMIN_PORT' }).waitFor();
    await page.unroute('**/admin/v1/production-requests*');
  });

  it('fits a phone: the new views at 390 px without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const view of ['webhooks', 'try', 'operator']) {
      await go(view);
      await page.waitForTimeout(100);
      expect(await sideways(), view).toBe(0);
      await page.screenshot({ path: shot(`extras-${view}-390`), fullPage: true });
    }
    expect(errors.filter((e) => !/401 .*\/admin\/v1\/production-requests|404 .*\/admin\/v1\/production-requests/.test(e))).toEqual([]);
  });
});
