/**
 * An operator's per-developer rate-limit override takes effect within seconds on every API
 * process, and applies to the calls already counted in the current window (issue #16 §12).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { buildApp } from '../../src/http/app.js';
import { newDeveloper, TEST_KEY_ENCRYPTION_KEY, testApp, testPort, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';
import { engineName, testDatabaseUrl } from '../helpers/db.js';

const admin = { authorization: 'Bearer test-admin-token-0123456789abcdefgh' };

describe(`rate-limit override on two processes (${engineName})`, () => {
  let t: TestApp;
  let second: FastifyInstance;
  let secondHandle: DatabaseHandle | undefined;
  let dev: NewDeveloper;
  let token: string;
  beforeAll(async () => {
    t = await testApp();
    const schema = (t.handle as { schema?: string }).schema;
    if (testDatabaseUrl && schema) secondHandle = await openDatabase({ databaseUrl: testDatabaseUrl, schema, poolSize: 4 });
    second = await buildApp({ config: loadConfig({ PORT: String(testPort()), PUBLIC_BASE_URL: t.config.publicBaseUrl, LOG_LEVEL: 'silent', ADMIN_TOKEN: 'test-admin-token-0123456789abcdefgh', KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY }), db: (secondHandle ?? t.handle).db });
    dev = await newDeveloper(t, 'Throttled later');
    token = await clientToken(t, dev);
  });
  afterAll(async () => {
    await second.close();
    await secondHandle?.close();
    await t.close();
  });

  const call = (app: FastifyInstance) => app.inject({ url: '/v1/specialties?page_size=1', headers: bearer(token) });

  it('a lowered limit bites on both processes within seconds, counting the calls already made', async () => {
    // Both processes have seen the developer (and cached its default limit of 1,200).
    for (const app of [t.app, second]) {
      for (let i = 0; i < 3; i++) expect((await call(app)).statusCode).toBe(200);
      expect((await call(app)).headers['ratelimit-limit']).toBe('1200');
    }
    const set = await t.app.inject({ method: 'PUT', url: `/admin/v1/developers/${dev.developer_id}/rate-limit`, headers: admin, payload: { rate_limit_per_minute: 5 } });
    expect(set.statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 2_500));
    for (const app of [t.app, second]) {
      // Four calls were already counted on this process in this window: the fifth passes, the sixth is over 5.
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await call(app)).statusCode);
      expect(statuses).toEqual([200, 429, 429]);
      const res = await call(app);
      expect(res.headers['ratelimit-limit']).toBe('5');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    // Raised again: calls go through again within seconds.
    await t.app.inject({ method: 'PUT', url: `/admin/v1/developers/${dev.developer_id}/rate-limit`, headers: admin, payload: { rate_limit_per_minute: 100 } });
    await new Promise((r) => setTimeout(r, 2_500));
    for (const app of [t.app, second]) expect((await call(app)).statusCode).toBe(200);
  });
});
