/**
 * The console's usage (docs/console.md, "Usage") on a real database: the request log's flush writes
 * the log entries and the daily counters in one statement; real /v1 calls are counted per client and
 * day with their errors; counters older than 90 days are pruned; the rate-limit headroom follows the
 * developer's limit and its calls of the last minute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usage } from '../../src/domain/console/usage.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { setDeveloperRateLimit } from '../../src/domain/developers/rate-limit.js';
import { DomainError } from '../../src/domain/errors.js';
import { RequestLogBuffer } from '../../src/domain/request-log/buffer.js';
import { pruneUsageDaily } from '../../src/domain/request-log/prune.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { scaled } from '../helpers/scale.js';

const today = () => new Date().toISOString().slice(0, 10);

describe(`console usage (${engineName})`, () => {
  let t: TestApp;
  let dev: NewDeveloper;
  let other: NewDeveloper;
  let token: string;

  beforeAll(async () => {
    t = await testApp();
    dev = await newDeveloper(t, 'Usage dev');
    other = await newDeveloper(t, 'Usage other');
    token = await clientToken(t, dev);
  });
  afterAll(async () => t.close());

  const counters = (developerId: string) =>
    t.db.selectFrom('usage_daily').select(['client_id', 'requests', 'errors']).where('developer_id', '=', developerId).orderBy('client_id').execute();

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

  it('counts real /v1 calls per client and day, with the error rate', async () => {
    const calls = [
      t.app.inject({ url: '/v1/appointments', headers: bearer(token) }),
      t.app.inject({ url: '/v1/appointments', headers: bearer(token) }),
      t.app.inject({ url: '/v1/appointments/ap_missing', headers: bearer(token) }),
    ];
    const statuses = (await Promise.all(calls)).map((r) => r.statusCode);
    expect(statuses.filter((s) => s >= 400)).toHaveLength(1);
    // The token request itself is not a developer call with a bearer token; wait for the flush.
    const deadline = Date.now() + scaled(5000);
    let got = await usage(t.db, 'sandbox', dev.developer_id, { defaultPerMinute: t.config.rateLimitPerMinute });
    while (got.days.reduce((n, d) => n + d.requests, 0) < 3) {
      if (Date.now() > deadline) throw new Error('usage not counted');
      await new Promise((r) => setTimeout(r, 50));
      got = await usage(t.db, 'sandbox', dev.developer_id, { defaultPerMinute: t.config.rateLimitPerMinute });
    }
    const logged = await t.db.selectFrom('request_log').select(['status']).where('developer_id', '=', dev.developer_id).execute();
    const mine = got.days.find((d) => d.client_id === dev.client_id && d.day === today())!;
    expect(mine.requests).toBe(logged.length);
    expect(mine.errors).toBe(logged.filter((l) => l.status >= 400).length);
    expect(mine.errors).toBeGreaterThanOrEqual(1);
    expect(mine.error_rate).toBeCloseTo(mine.errors / mine.requests, 4);
    expect(got.rate_limit).toMatchObject({ per_minute: t.config.rateLimitPerMinute, used_last_minute: logged.length });
    expect(got.rate_limit.remaining).toBe(t.config.rateLimitPerMinute - logged.length);
    expect(got.rate_limit.by_client).toEqual([{ client_id: dev.client_id, requests: logged.length }]);
    const theirs = await usage(t.db, 'sandbox', other.developer_id, { defaultPerMinute: 100 });
    expect(theirs.days).toEqual([]);
    expect(theirs.rate_limit).toEqual({ per_minute: 100, used_last_minute: 0, remaining: 100, by_client: [] });
  });

  it("follows the operator's override of the developer's limit", async () => {
    await setDeveloperRateLimit(t.db, 'sandbox', dev.developer_id, 2);
    const got = await usage(t.db, 'sandbox', dev.developer_id, { defaultPerMinute: 600 });
    expect(got.rate_limit.per_minute).toBe(2);
    expect(got.rate_limit.remaining).toBe(0);
    await setDeveloperRateLimit(t.db, 'sandbox', dev.developer_id, null);
  });

  it('shows the asked number of days, prunes counters older than 90 days, and names a bad `days`', async () => {
    const day = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10);
    await t.db.insertInto('usage_daily').values([
      { env: 'sandbox', developer_id: dev.developer_id, client_id: dev.client_id, day: day(5), requests: 10, errors: 5 },
      { env: 'sandbox', developer_id: dev.developer_id, client_id: dev.client_id, day: day(89), requests: 7, errors: 0 },
      { env: 'sandbox', developer_id: dev.developer_id, client_id: dev.client_id, day: day(91), requests: 9, errors: 0 },
    ]).execute();
    const week = await usage(t.db, 'sandbox', dev.developer_id, { days: 7, defaultPerMinute: 600 });
    expect(week.days.map((d) => d.day)).toEqual([today(), day(5)]);
    expect(week.days[1]).toMatchObject({ requests: 10, errors: 5, error_rate: 0.5 });
    expect((await usage(t.db, 'sandbox', dev.developer_id, { days: 90, defaultPerMinute: 600 })).days.map((d) => d.day)).toEqual([today(), day(5), day(89)]);
    expect(await pruneUsageDaily(t.db)).toBe(1);
    expect((await counters(dev.developer_id)).reduce((n, c) => n + c.requests, 0)).toBeLessThan(30);
    for (const days of [0, 91, 1.5]) {
      const e = await usage(t.db, 'sandbox', dev.developer_id, { days, defaultPerMinute: 600 }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).errors[0]).toMatchObject({ field: 'days' });
    }
    expect(((await usage(t.db, 'sandbox', 'dv_nobody', { defaultPerMinute: 1 }).catch((x: unknown) => x)) as DomainError).kind).toBe('not_found');
  });
});
