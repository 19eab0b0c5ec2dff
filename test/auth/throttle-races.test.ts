/**
 * Sign-in throttles under races: every attempt is counted before its password is checked, so at
 * most the limit's number of attempts per window reach the check however many arrive at once, on
 * one API process or two sharing the database (docs/auth.md, "Throttles").
 */
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { createUser } from '../../src/domain/users/create-user.js';
import { buildApp } from '../../src/http/app.js';
import { newDeveloper, TEST_KEY_ENCRYPTION_KEY, testApp, testPort, type TestApp } from '../helpers/app.js';
import { hiddenField } from '../helpers/auth.js';
import { testDatabaseUrl } from '../helpers/db.js';
import { fetchReportingStalls } from '../helpers/stall-report.js';

const REDIRECT = 'http://127.0.0.1:9/callback';

describe('sign-in throttles under concurrent attempts', () => {
  let t: TestApp;
  let dev: NewDeveloper;
  /** Base URLs of two API processes on one database (on PGlite: two apps on one handle). */
  const bases: string[] = [];
  /** `fetch` per process, failing with where it stalled if that server does not answer (test/helpers/stall-report.ts). */
  const watched: ReturnType<typeof fetchReportingStalls>[] = [];
  let second: { close(): Promise<void> } | undefined;

  beforeAll(async () => {
    t = await testApp();
    dev = await newDeveloper(t, 'Throttle app', [REDIRECT]);
    bases.push(await t.listen());
    watched.push(fetchReportingStalls(t.app.server as Server));
    let handle: DatabaseHandle | undefined;
    const schema = (t.handle as { schema?: string }).schema;
    if (testDatabaseUrl && schema) handle = await openDatabase({ databaseUrl: testDatabaseUrl, schema, poolSize: 10 });
    const port = testPort();
    const config = loadConfig({ PORT: String(port), LOG_LEVEL: 'silent', KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY });
    const app = await buildApp({ config, db: (handle ?? t.handle).db });
    await app.listen({ port, host: '127.0.0.1' });
    bases.push(`http://127.0.0.1:${port}`);
    watched.push(fetchReportingStalls(app.server));
    second = { close: async () => { await app.close(); await handle?.close(); } };
  });
  afterAll(async () => {
    await second?.close();
    await t.close();
  });

  /** Opens the sign-in page at `base`: the browser cookie and the form's hidden fields. */
  async function open(base: string, i: number) {
    const q = new URLSearchParams({
      response_type: 'code', client_id: dev.user_client_id, redirect_uri: REDIRECT, scope: 'external.appointment.read',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 's',
    });
    const page = await watched[i]!(`${base}/auth/authorize?${q}`);
    expect(page.status).toBe(200);
    const body = await page.text();
    const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    return { cookie, request: hiddenField(body, 'request'), csrf_token: hiddenField(body, 'csrf_token') };
  }

  async function signIn(i: number, form: Awaited<ReturnType<typeof open>>, email: string, password: string): Promise<number> {
    const res = await watched[i]!(`${bases[i]}/auth/authorize/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
      body: new URLSearchParams({ request: form.request, csrf_token: form.csrf_token, email, password }).toString(),
    });
    await res.arrayBuffer();
    return res.status;
  }

  it('lets at most 10 attempts per account reach the password check, across two processes, and then refuses the right password too', async () => {
    await createUser(t.db, { env: 'sandbox', email: 'raced@example.com', password: 'raced-password-1', role: 'patient' });
    const forms = await Promise.all(bases.map(open));
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) => signIn(i % 2, forms[i % 2]!, 'raced@example.com', `wrong-guess-${i}`)),
    );
    const checked = statuses.filter((s) => s !== 429);
    expect(checked.length).toBeLessThanOrEqual(10);
    expect(checked.every((s) => s === 401)).toBe(true);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(50);
    // The right password, now, on either process: refused without being checked.
    expect(await signIn(0, forms[0]!, 'raced@example.com', 'raced-password-1')).toBe(429);
    expect(await signIn(1, forms[1]!, 'raced@example.com', 'raced-password-1')).toBe(429);
  });

  it('lets at most 100 attempts per address reach the check, whatever accounts they name', async () => {
    await t.db.deleteFrom('auth_rate_limits').execute(); // the first test's attempts came from this address too
    const forms = await Promise.all(bases.map(open));
    const statuses = await Promise.all(
      Array.from({ length: 140 }, (_, i) => signIn(i % 2, forms[i % 2]!, `nobody-${i}@example.com`, 'some-password-1')),
    );
    const checked = statuses.filter((s) => s !== 429);
    expect(checked.length).toBeLessThanOrEqual(100);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(40);
  });
});

describe('the authorization endpoint is throttled per address', () => {
  it('answers 429 with Retry-After past the per-minute limit, before reading or writing anything', async () => {
    const t = await testApp({ RATE_LIMIT_PER_MINUTE: '5' });
    try {
      const dev = await newDeveloper(t, 'Flooded', [REDIRECT]);
      const q = new URLSearchParams({
        response_type: 'code', client_id: dev.user_client_id, redirect_uri: REDIRECT, scope: 'external.appointment.read',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 's',
      });
      const rows = async () => Number((await t.db.selectFrom('authorization_requests').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const statuses = (await Promise.all(Array.from({ length: 12 }, () => t.app.inject({ url: `/auth/authorize?${q}` })))).map((r) => r.statusCode);
      expect(statuses.filter((s) => s === 200)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(7);
      expect(await rows()).toBe(0); // showing the page stores nothing (test/auth/authorize-no-write.test.ts)
      const refused = await t.app.inject({ url: `/auth/authorize?${q}` });
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.headers['content-type']).toMatch(/^text\/html/);
      expect(refused.body).toContain('Too many sign-in requests');
    } finally {
      await t.close();
    }
  });
});
