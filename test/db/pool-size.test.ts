/**
 * `DATABASE_POOL_SIZE` (README, "Configuration"): a service started from its configuration keeps at
 * most that many connections to PostgreSQL, shared by its requests and its background jobs; under more
 * parallel requests than that, the requests wait for a connection and are all answered.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/server.js';
import { TEST_KEY_ENCRYPTION_KEY, testPort } from '../helpers/app.js';
import { freshDatabase, testDatabaseUrl, type TestDatabase } from '../helpers/db.js';

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

  async function busiest(poolSize: string | undefined): Promise<number> {
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
      return most;
    } finally {
      await service.close();
    }
  }

  it('keeps at most DATABASE_POOL_SIZE sessions, and more than that by default (10)', async () => {
    expect(await busiest('3')).toBe(3);
    expect(await busiest(undefined)).toBeGreaterThan(3);
  });
});
