/**
 * The console's usage (docs/console.md, "Usage") on a real database: the request log's flush writes
 * the log entries and the daily counters in one statement; two apps of one console account call /v1
 * over real HTTP with their own real tokens (machine credentials, and a patient's token of one app's
 * user client) and the Console API answers requests, errors and error rate per app and day with each
 * app's clients, and the headroom per app; clients of no app are one row; another account's usage is
 * 404, and a call without a console token is refused; counters older than 90 days are pruned; the
 * rate-limit headroom follows the developer's limit.
 */
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usage, type Usage } from '../../src/domain/console/usage.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { setDeveloperRateLimit } from '../../src/domain/developers/rate-limit.js';
import { DomainError } from '../../src/domain/errors.js';
import { RequestLogBuffer } from '../../src/domain/request-log/buffer.js';
import { pruneUsageDaily } from '../../src/domain/request-log/prune.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { authPath, userToken } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { scaled } from '../helpers/scale.js';
import { fetchReportingStalls } from '../helpers/stall-report.js';
import { consoleAccountWithMachine, toolsBase, type ConsoleAccount } from './tools-env.js';

const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10);

describe(`console usage (${engineName})`, () => {
  let t: TestApp;
  let base: string;
  let dev: NewDeveloper;
  /** `fetch`, failing with where it stalled if the server does not answer (test/helpers/stall-report.ts). */
  let watched: ReturnType<typeof fetchReportingStalls>;

  beforeAll(async () => {
    t = await testApp();
    base = await t.listen();
    watched = fetchReportingStalls(t.app.server as Server);
    dev = await newDeveloper(t, 'Usage dev');
  });
  afterAll(async () => t.close());

  const counters = (developerId: string) =>
    t.db.selectFrom('usage_daily').select(['client_id', 'requests', 'errors']).where('developer_id', '=', developerId).orderBy('client_id').execute();
  /** A real HTTP call to the running server. */
  const http = async (path: string, init: { method?: string; token?: string; body?: unknown } = {}) => {
    const res = await watched(`${base}${path}`, {
      method: init.method ?? 'GET',
      headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const machineToken = async (clientId: string, secret: string): Promise<string> => {
    const res = await http(`${authPath(t)}/oauth/token`, { method: 'POST', body: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret, audience: t.config.audience } });
    expect(res.status).toBe(200);
    return res.body.access_token as string;
  };

  it('one flush writes the log entries and adds them to the day’s counters, errors counted apart', async () => {
    const buffer = new RequestLogBuffer(t.db, { flushMs: 60_000 });
    const entry = (status: number, client = 'cl_flush_a') => ({
      env: 'sandbox', developer_id: 'dv_flush', client_id: client, at: new Date(), method: 'GET', path: '/v1/x', status, latency_ms: 1,
      request_id: `req_${Math.random()}`, error: status >= 400 ? { error_type: 'x' } : null,
    });
    [200, 201, 404, 500].forEach((s) => buffer.add(entry(s)));
    buffer.add(entry(200, 'cl_flush_b'));
    await buffer.flush();
    expect(await t.db.selectFrom('request_log').select('id').where('developer_id', '=', 'dv_flush').execute()).toHaveLength(5);
    expect(await counters('dv_flush')).toEqual([
      { client_id: 'cl_flush_a', requests: 4, errors: 2 },
      { client_id: 'cl_flush_b', requests: 1, errors: 0 },
    ]);
    buffer.add(entry(429));
    await buffer.close();
    expect((await counters('dv_flush'))[0]).toEqual({ client_id: 'cl_flush_a', requests: 5, errors: 3 });
  });

  describe('per app, over HTTP with real tokens', () => {
    let a: ConsoleAccount;
    let b: ConsoleAccount;
    /** A's two apps: the sign-up app and one created over the Console API, with their clients. */
    const apps: { id: string; name: string; machine: string; secret: string; user: string }[] = [];
    let patientToken = '';

    beforeAll(async () => {
      a = await consoleAccountWithMachine(t);
      b = await consoleAccountWithMachine(t);
      const list = await http('/console/v1/apps', { token: a.token });
      const first = (list.body.data as { app_id: string; name: string; clients: { kind: string; client_id: string }[] }[])[0]!;
      apps.push({ id: first.app_id, name: first.name, machine: a.machine.client_id, secret: a.machine.client_secret, user: first.clients.find((c) => c.kind === 'user')!.client_id });
      const created = await http('/console/v1/apps', { method: 'POST', token: a.token, body: { name: 'Usage widget', redirect_uris: ['http://127.0.0.1:9/callback'] } });
      expect(created.status).toBe(201);
      const app = created.body.data as { app_id: string; name: string; clients: { kind: string; client_id: string; client_secret?: string }[] };
      const m = app.clients.find((c) => c.kind === 'machine')!;
      apps.push({ id: app.app_id, name: app.name, machine: m.client_id, secret: m.client_secret!, user: app.clients.find((c) => c.kind === 'user')!.client_id });
      // A patient signs in to the second app's user client (authorization code with PKCE).
      patientToken = await userToken(t, { developer_id: a.developerId, client_id: apps[1]!.machine, client_secret: apps[1]!.secret, user_client_id: apps[1]!.user } as NewDeveloper,
        { email: `usage-patient-${process.pid}@example.org`, password: 'patient-pass-1', scope: 'external.appointment.read' });
    });

    /** A's usage over the Console API, once the request log's flush has counted `calls` calls of A. */
    async function usageOf(who: ConsoleAccount, developerId: string, calls: number): Promise<Usage> {
      const deadline = Date.now() + scaled(5000);
      for (;;) {
        const res = await http(`${toolsBase(developerId)}/usage?days=7`, { token: who.token });
        expect(res.status).toBe(200);
        const got = res.body.data as Usage;
        if (got.days.reduce((n, d) => n + d.requests, 0) >= calls) return got;
        if (Date.now() > deadline) throw new Error(`usage not counted: ${JSON.stringify(got)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    it("answers each app's requests, errors and error rate for the day, with each client's share", async () => {
      const [one, two] = [await machineToken(apps[0]!.machine, apps[0]!.secret), await machineToken(apps[1]!.machine, apps[1]!.secret)];
      const statuses = async (token: string, paths: string[]) => Promise.all(paths.map(async (p) => (await http(p, { token })).status));
      // The first app: 3 answered, 1 not found. The second: its machine credential 1 answered and 2
      // refused (a missing appointment, a bad page size), its user client 1 answered.
      expect(await statuses(one, ['/v1/appointments', '/v1/appointments', '/v1/specialties', '/v1/appointments/ap_missing'])).toEqual([200, 200, 200, 404]);
      expect(await statuses(two, ['/v1/appointments', '/v1/appointments/ap_missing', '/v1/specialties?page_size=0'])).toEqual([200, 404, 400]);
      expect(await statuses(patientToken, ['/v1/appointments'])).toEqual([200]);

      const got = await usageOf(a, a.developerId, 8);
      expect(got.days).toEqual([
        {
          day: today(), app_id: apps[0]!.id, app_name: apps[0]!.name, requests: 4, errors: 1, error_rate: 0.25,
          clients: [{ client_id: apps[0]!.machine, kind: 'machine', requests: 4, errors: 1, error_rate: 0.25 }],
        },
        {
          day: today(), app_id: apps[1]!.id, app_name: 'Usage widget', requests: 4, errors: 2, error_rate: 0.5,
          clients: [
            { client_id: apps[1]!.machine, kind: 'machine', requests: 3, errors: 2, error_rate: 0.6667 },
            { client_id: apps[1]!.user, kind: 'user', requests: 1, errors: 0, error_rate: 0 },
          ],
        },
      ]);
      // The counters agree with the request log, call for call.
      const logged = await t.db.selectFrom('request_log').select(['client_id', 'status']).where('developer_id', '=', a.developerId).execute();
      expect(logged).toHaveLength(8);
      expect(got.rate_limit).toEqual({
        per_minute: t.config.rateLimitPerMinute, used_last_minute: 8, remaining: t.config.rateLimitPerMinute - 8,
        by_app: [{ app_id: apps[0]!.id, app_name: apps[0]!.name, requests: 4 }, { app_id: apps[1]!.id, app_name: 'Usage widget', requests: 4 }],
        by_client: [
          { client_id: apps[0]!.machine, app_id: apps[0]!.id, requests: 4 },
          { client_id: apps[1]!.machine, app_id: apps[1]!.id, requests: 3 },
          { client_id: apps[1]!.user, app_id: apps[1]!.id, requests: 1 },
        ],
      });
      // B made no call: nothing of A's shows in B's usage.
      const theirs = await http(`${toolsBase(b.developerId)}/usage`, { token: b.token });
      expect(theirs.status).toBe(200);
      expect(theirs.body.data).toEqual({ days: [], rate_limit: { per_minute: t.config.rateLimitPerMinute, used_last_minute: 0, remaining: t.config.rateLimitPerMinute, by_app: [], by_client: [] } });
    });

    it("another account's usage is 404, as for a developer that does not exist", async () => {
      for (const [who, developerId] of [[b, a.developerId], [a, b.developerId], [a, 'dv_nobody']] as const) {
        const res = await http(`${toolsBase(developerId)}/usage`, { token: who.token });
        expect(res.status, developerId).toBe(404);
        expect(JSON.stringify(res.body)).not.toContain(apps[0]!.machine);
      }
    });

    it('refuses a call without a console token: none, a /v1 machine token, a patient token', async () => {
      const machine = await machineToken(apps[0]!.machine, apps[0]!.secret);
      for (const token of [undefined, machine, patientToken]) {
        const res = await http(`${toolsBase(a.developerId)}/usage`, token ? { token } : {});
        expect(res.status).toBe(401);
        expect(res.body).not.toHaveProperty('data');
      }
    });
  });

  it('groups the calls of clients that belong to no app in one row per day, after the apps', async () => {
    await t.db.insertInto('usage_daily').values([
      { env: 'sandbox', developer_id: dev.developer_id, client_id: dev.client_id, day: today(), requests: 3, errors: 0 },
      { env: 'sandbox', developer_id: dev.developer_id, client_id: 'cl_gone_2', day: today(), requests: 4, errors: 1 },
      { env: 'sandbox', developer_id: dev.developer_id, client_id: 'cl_gone_1', day: today(), requests: 1, errors: 1 },
    ]).execute();
    const got = await usage(t.db, 'sandbox', dev.developer_id, { days: 1, defaultPerMinute: 600 });
    const app = await t.db.selectFrom('apps').select(['id', 'name']).where('developer_id', '=', dev.developer_id).executeTakeFirstOrThrow();
    expect(got.days).toEqual([
      { day: today(), app_id: app.id, app_name: app.name, requests: 3, errors: 0, error_rate: 0, clients: [{ client_id: dev.client_id, kind: 'machine', requests: 3, errors: 0, error_rate: 0 }] },
      {
        day: today(), app_id: null, app_name: null, requests: 5, errors: 2, error_rate: 0.4,
        clients: [
          { client_id: 'cl_gone_1', kind: null, requests: 1, errors: 1, error_rate: 1 },
          { client_id: 'cl_gone_2', kind: null, requests: 4, errors: 1, error_rate: 0.25 },
        ],
      },
    ]);
  });

  it("follows the operator's override of the developer's limit", async () => {
    await setDeveloperRateLimit(t.db, 'sandbox', dev.developer_id, 2);
    const got = await usage(t.db, 'sandbox', dev.developer_id, { defaultPerMinute: 600 });
    expect(got.rate_limit.per_minute).toBe(2);
    expect(got.rate_limit.remaining).toBe(2);
    await setDeveloperRateLimit(t.db, 'sandbox', dev.developer_id, null);
  });

  it('shows the asked number of days, prunes counters older than 90 days, and names a bad `days`', async () => {
    await t.db.insertInto('usage_daily').values([
      { env: 'sandbox', developer_id: dev.developer_id, client_id: dev.client_id, day: daysAgo(5), requests: 10, errors: 5 },
      { env: 'sandbox', developer_id: dev.developer_id, client_id: dev.client_id, day: daysAgo(89), requests: 7, errors: 0 },
      { env: 'sandbox', developer_id: dev.developer_id, client_id: dev.client_id, day: daysAgo(91), requests: 9, errors: 0 },
    ]).execute();
    const week = await usage(t.db, 'sandbox', dev.developer_id, { days: 7, defaultPerMinute: 600 });
    expect(week.days.map((d) => [d.day, d.app_id === null])).toEqual([[today(), false], [today(), true], [daysAgo(5), false]]);
    expect(week.days[2]).toMatchObject({ requests: 10, errors: 5, error_rate: 0.5 });
    expect((await usage(t.db, 'sandbox', dev.developer_id, { days: 90, defaultPerMinute: 600 })).days.map((d) => d.day)).toEqual([today(), today(), daysAgo(5), daysAgo(89)]);
    expect(await pruneUsageDaily(t.db)).toBe(1);
    expect((await counters(dev.developer_id)).reduce((n, c) => n + c.requests, 0)).toBe(25);
    for (const days of [0, 91, 1.5]) {
      const e = await usage(t.db, 'sandbox', dev.developer_id, { days, defaultPerMinute: 600 }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).errors[0]).toMatchObject({ field: 'days' });
    }
    expect(((await usage(t.db, 'sandbox', 'dv_nobody', { defaultPerMinute: 1 }).catch((x: unknown) => x)) as DomainError).kind).toBe('not_found');
  });
});
