/**
 * `DATABASE_POOL_SIZE` (README, "Configuration"): a service started from its configuration keeps at
 * most that many connections to PostgreSQL, shared by its requests and its background jobs; under more
 * parallel requests than that, the requests wait for a connection and are all answered. `/metrics`
 * shows the pool: its size, connections in use and idle, and statements waiting (PostgreSQL only).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/server.js';
import { TEST_KEY_ENCRYPTION_KEY, testApp, testPort } from '../helpers/app.js';
import { engineName, freshDatabase, testDatabaseUrl, type TestDatabase } from '../helpers/db.js';
import { scaled } from '../helpers/scale.js';

describe.skipIf(!testDatabaseUrl)('DATABASE_POOL_SIZE (postgres)', () => {
  let schemaDb: TestDatabase;
  let dataDir: string;
  let observer: pg.Client;
  beforeAll(async () => {
    schemaDb = await freshDatabase({ poolSize: 1 });
    dataDir = await mkdtemp(join(tmpdir(), 'carebook-pool-'));
    observer = new pg.Client({ connectionString: testDatabaseUrl });
    await observer.connect();
  });
  afterAll(async () => {
    await observer?.end();
    await schemaDb?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** The service's database URL: its own schema (as the test's) and an application name to find its sessions by. */
  const serviceUrl = (appName: string): string => {
    const u = new URL(testDatabaseUrl!);
    u.searchParams.set('options', `-c search_path="${schemaDb.schema}",public`);
    u.searchParams.set('application_name', appName);
    return u.toString();
  };
  const sessions = async (appName: string): Promise<number> =>
    Number((await observer.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [appName])).rows[0]!.n);

  async function busiest(poolSize: string | undefined): Promise<{ most: number; size: number }> {
    const appName = `carebook-pool-${randomBytes(4).toString('hex')}`;
    const port = testPort();
    const config = loadConfig({
      PORT: String(port),
      DATABASE_URL: serviceUrl(appName),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
      ...(poolSize ? { DATABASE_POOL_SIZE: poolSize } : {}),
    });
    const service = await startService(config, { quiet: true });
    try {
      let most = 0;
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all(Array.from({ length: 40 }, () => fetch(`${service.url}/readyz`).then((r) => r.status)));
        expect(answers.every((s) => s === 200)).toBe(true);
        most = Math.max(most, await sessions(appName));
      }
      const metrics = await (await fetch(`${service.url}/metrics`)).text();
      return { most, size: Number(/^carebook_db_pool_size (\d+)$/m.exec(metrics)?.[1]) };
    } finally {
      await service.close();
    }
  }

  it('keeps at most DATABASE_POOL_SIZE sessions, and more than that by default (10); /metrics says the size', async () => {
    expect(await busiest('3')).toEqual({ most: 3, size: 3 });
    const byDefault = await busiest(undefined);
    expect(byDefault.most).toBeGreaterThan(3);
    expect(byDefault.size).toBe(10);
  });
});

describe(`the pool in /metrics (${engineName})`, () => {
  /** The pool's gauges in a /metrics text, by name and label. */
  const gauges = (text: string): Record<string, number> =>
    Object.fromEntries([...text.matchAll(/^(carebook_db_pool_\w+(?:\{[^}]*\})?) (\S+)$/gm)].map((m) => [m[1]!, Number(m[2])]));

  test.runIf(testDatabaseUrl)('PostgreSQL: size, connections in use and idle, and what waits for one', async () => {
    const t = await testApp({}, { poolSize: 1, insuranceMappingJob: false });
    try {
      const metrics = async () => gauges((await t.app.inject({ url: '/metrics' })).body);
      await t.app.inject({ url: '/readyz' }); // opens the one connection
      expect(await metrics()).toEqual({
        carebook_db_pool_size: 1,
        'carebook_db_pool_connections{state="in_use"}': 0,
        'carebook_db_pool_connections{state="idle"}': 1,
        carebook_db_pool_waiting: 0,
      });
      // The one connection held (as by a long transaction): a request needing the database waits for it.
      const { waiting } = await t.db.connection().execute(async () => {
        const answer = t.app.inject({ url: '/readyz' });
        // Until the request has reached the pool (a few milliseconds; longer on a busy host).
        for (const end = Date.now() + scaled(5_000); (await metrics()).carebook_db_pool_waiting !== 1 && Date.now() < end; ) {
          await new Promise((r) => setTimeout(r, 10));
        }
        expect(await metrics()).toMatchObject({
          'carebook_db_pool_connections{state="in_use"}': 1,
          'carebook_db_pool_connections{state="idle"}': 0,
          carebook_db_pool_waiting: 1,
        });
        // Not awaited here: the request gets the connection once this callback gives it back.
        return { waiting: answer };
      });
      expect((await waiting).statusCode).toBe(200);
      expect(await metrics()).toMatchObject({ carebook_db_pool_waiting: 0, 'carebook_db_pool_connections{state="idle"}': 1 });
    } finally {
      await t.close();
    }
  });

  test.runIf(!testDatabaseUrl)('the embedded engine (one session, no pool): no pool gauges', async () => {
    const t = await testApp({}, { insuranceMappingJob: false });
    try {
      const text = (await t.app.inject({ url: '/metrics' })).body;
      expect(text).toContain('carebook_http_request_duration_seconds');
      expect(gauges(text)).toEqual({});
    } finally {
      await t.close();
    }
  });
});
