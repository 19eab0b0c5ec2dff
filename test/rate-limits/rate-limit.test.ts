import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { authPath, bearer, clientToken } from '../helpers/auth.js';

const admin = { authorization: 'Bearer test-admin-token-0123456789abcdefgh' };

async function redisUp(): Promise<boolean> {
  const r = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

describe('rate limits per credential', () => {
  let t: TestApp;
  let dev: NewDeveloper;
  let token: string;
  beforeAll(async () => {
    t = await testApp({ RATE_LIMIT_PER_MINUTE: '5' });
    dev = await newDeveloper(t);
    token = await clientToken(t, dev);
  });
  afterAll(async () => t.close());

  const call = (headers: Record<string, string>) => t.app.inject({ url: '/v1/specialties', headers });

  it('counts calls, sets RateLimit headers, and answers 429 with Retry-After and the error body', async () => {
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 6; i++) {
      last = await call(bearer(token));
      statuses.push(last.statusCode);
      if (i === 0) {
        expect(last.headers['ratelimit-limit']).toBe('5');
        expect(last.headers['ratelimit-remaining']).toBe('4');
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    expect(last!.json()).toMatchObject({ error_type: 'api_error', request_id: last!.headers['x-request-id'] });
  });

  it('keeps credentials apart, and limits calls without a valid token per address', async () => {
    const other = await newDeveloper(t, 'other');
    expect((await call(bearer(await clientToken(t, other)))).statusCode).toBe(200);
    const anon: number[] = [];
    for (let i = 0; i < 6; i++) anon.push((await call({})).statusCode);
    expect(anon).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('lets the operator override one developer\'s limit', async () => {
    const dev3 = await newDeveloper(t, 'big customer');
    const set = await t.app.inject({ method: 'PUT', url: `/admin/v1/developers/${dev3.developer_id}/rate-limit`, headers: admin, payload: { rate_limit_per_minute: 8 } });
    expect(set.json()).toEqual({ developer_id: dev3.developer_id, rate_limit_per_minute: 8 });
    const tk = await clientToken(t, dev3);
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await call(bearer(tk))).statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(8);
    expect(statuses.at(-1)).toBe(429);
    expect((await t.app.inject({ method: 'PUT', url: '/admin/v1/developers/dv_none/rate-limit', headers: admin, payload: { rate_limit_per_minute: 8 } })).statusCode).toBe(404);
  });

  it('shares counters between processes through Redis when REDIS_URL is set', async (ctx) => {
    if (!(await redisUp())) ctx.skip();
    const prefix = { REDIS_URL: 'redis://127.0.0.1:6379', RATE_LIMIT_PER_MINUTE: '4' };
    const a = await testApp(prefix);
    const b = await testApp({ ...prefix });
    try {
      // One developer known to both apps (each has its own database): same client id, same key.
      const d = await newDeveloper(a, 'shared');
      await b.db.insertInto('developers').values({ id: d.developer_id, env: 'sandbox', name: 'shared' }).execute();
      await b.db.insertInto('apps').values(await a.db.selectFrom('apps').selectAll().where('developer_id', '=', d.developer_id).execute()).execute();
      const rows = await a.db.selectFrom('oauth_clients').selectAll().where('developer_id', '=', d.developer_id).execute();
      await b.db.insertInto('oauth_clients').values(rows.map((r) => ({ ...r, created_at: r.created_at, secret_rotated_at: r.secret_rotated_at }))).execute();
      const ta = await clientToken(a, d);
      const tb = await clientToken(b, d);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await a.app.inject({ url: '/v1/specialties', headers: bearer(ta) })).statusCode);
      for (let i = 0; i < 2; i++) statuses.push((await b.app.inject({ url: '/v1/specialties', headers: bearer(tb) })).statusCode);
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('per-address limits behind a load balancer (TRUST_PROXY)', () => {
  const anonCalls = async (t: TestApp, forwardedFor: string[]): Promise<number[]> => {
    const out: number[] = [];
    // inject's peer address is 127.0.0.1: the "load balancer".
    for (const xff of forwardedFor) out.push((await t.app.inject({ url: '/v1/specialties', headers: { 'x-forwarded-for': xff } })).statusCode);
    return out;
  };
  const clientA = Array<string>(5).fill('203.0.113.7');

  it('parses TRUST_PROXY: off by default, true, a hop count, or addresses/CIDRs', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1', '::1']);
    for (const bad of ['yes', '10.0.0.0/33', '10.0.0.1,lb.internal', ',']) expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(ConfigError);
  });

  it('with TRUST_PROXY, keys the unauthenticated limit on the forwarded client address', async () => {
    const t = await testApp({ RATE_LIMIT_PER_MINUTE: '5', TRUST_PROXY: '127.0.0.0/8' });
    try {
      expect(await anonCalls(t, [...clientA, '203.0.113.7'])).toEqual([401, 401, 401, 401, 401, 429]);
      // Another client behind the same balancer has its own budget; a spoofed chain ending in it too.
      expect(await anonCalls(t, ['198.51.100.9', '203.0.113.7, 198.51.100.9'])).toEqual([401, 401]);
    } finally {
      await t.close();
    }
  });

  it('with a hop count, takes the address that many proxies from the peer', async () => {
    const t = await testApp({ TRUST_PROXY: '1' });
    try {
      t.app.get('/_ip', async (req) => ({ ip: req.ip }));
      const ip = async (xff: string) => (await t.app.inject({ url: '/_ip', headers: { 'x-forwarded-for': xff } })).json().ip;
      expect(await ip('198.51.100.1, 203.0.113.7')).toBe('203.0.113.7');
      expect(await ip('203.0.113.8')).toBe('203.0.113.8');
    } finally {
      await t.close();
    }
  });

  it('without TRUST_PROXY, ignores X-Forwarded-For: every caller shares the peer address', async () => {
    const t = await testApp({ RATE_LIMIT_PER_MINUTE: '5' });
    try {
      expect(await anonCalls(t, [...clientA, '198.51.100.9'])).toEqual([401, 401, 401, 401, 401, 429]);
    } finally {
      await t.close();
    }
  });
});

describe('rate limit of the token endpoint', () => {
  it('limits token requests per client address: 429, Retry-After and an RFC 6749 §5.2 body', async () => {
    const t = await testApp({ RATE_LIMIT_PER_MINUTE: '5', TRUST_PROXY: 'true' });
    try {
      const dev = await newDeveloper(t);
      const request = (xff: string, secret = dev.client_secret) =>
        t.app.inject({
          method: 'POST',
          url: `${authPath(t)}/oauth/token`,
          headers: { 'x-forwarded-for': xff },
          payload: { grant_type: 'client_credentials', client_id: dev.client_id, client_secret: secret, audience: t.config.audience },
        });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await request('203.0.113.7', i % 2 ? 'wrong' : dev.client_secret)).statusCode);
      expect(statuses).toEqual([200, 401, 200, 401, 200]);
      const refused = await request('203.0.113.7');
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.json()).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/rate limit/) });
      // Another address is not affected, and the token endpoint's budget is its own.
      expect((await request('198.51.100.9')).statusCode).toBe(200);
      expect((await t.app.inject({ url: '/v1/specialties', headers: { 'x-forwarded-for': '203.0.113.7' } })).statusCode).toBe(401);
    } finally {
      await t.close();
    }
  });
});
