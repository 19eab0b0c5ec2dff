/**
 * A real application over a fresh database for one test file: `app.inject` for most tests,
 * `listen()` for tests that need a real HTTP server (races, browsers, OAuth client libraries).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { attachmentStoreFor } from '../../src/domain/attachments/store-for.js';
import type { AttachmentStore } from '../../src/domain/attachments/store.js';
import { createDeveloper, type NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { buildApp, type AppDeps } from '../../src/http/app.js';
import { insuranceMappingsJob } from '../../src/jobs/insurance-mappings.js';
import { startJobs } from '../../src/jobs/registry.js';
import { freshDatabase, type TestDatabase } from './db.js';

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  handle: DatabaseHandle;
  db: DatabaseHandle['db'];
  /** The attachment store, as `serve` picks it for the engine: files on PGlite (in `dataDir`), the row on PostgreSQL. */
  attachments: AttachmentStore;
  /** A temporary DATA_DIR of this app (the attachment files live in its `attachments/`), removed on close. */
  dataDir: string;
  /** Listens on 127.0.0.1 (a port below 32768) and returns the base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** The key-encryption key of test apps (the signing keys are sealed under it, as in a real service). */
export const TEST_KEY_ENCRYPTION_KEY = Buffer.alloc(32, 0x5a).toString('base64');

/**
 * Ports for test servers, below the ephemeral range (32768+). Each test worker running at the same
 * time (`VITEST_POOL_ID`, 1…n) has its own block of 1,500 ports in 20000–31999, and a process starts
 * at a pid-dependent place in its block, so that two runs side by side rarely meet. A worker runs
 * many files one after another (`isolate: false`), so its ports wrap around within its block.
 */
const PORT_BLOCK = 1_500;
const portBlockStart = 20_000 + ((Number(process.env.VITEST_POOL_ID ?? 1) - 1) % 8) * PORT_BLOCK;
let portOffset = (process.pid % 10) * 150;

/** A port no other test worker of this run hands out. */
export function testPort(): number {
  portOffset = (portOffset + 1) % PORT_BLOCK;
  return portBlockStart + portOffset;
}

/**
 * The app over a fresh database. Unless `insuranceMappingJob` is false, the insurance-mapping job
 * runs beside it (kicked by the API, as in `serve`), so accepted mapping requests get applied; the
 * other background jobs run only where a test starts them.
 */
export async function testApp(
  env: Record<string, string> = {},
  opts: {
    insuranceMappingJob?: boolean;
    practiceEventPollMs?: number;
    /** A read replica beside the test database (test/db/read-replica.test.ts opens a stand-in for one); closed with the app. */
    replica?: (handle: TestDatabase) => Promise<NonNullable<AppDeps['replica']> & { close(): Promise<void> }>;
    /** PostgreSQL: connections in the pool (default 10; 1 puts every statement on one session). */
    poolSize?: number;
  } = {},
): Promise<TestApp> {
  const handle = await freshDatabase(opts.poolSize ? { poolSize: opts.poolSize } : {});
  const replica = opts.replica ? await opts.replica(handle) : undefined;
  const dataDir = await mkdtemp(join(tmpdir(), 'carebook-test-data-'));
  const attachments = await attachmentStoreFor(handle.engine, dataDir);
  const port = testPort();
  const config = loadConfig({ PORT: String(port), ADMIN_TOKEN: 'test-admin-token-0123456789abcdefgh', LOG_LEVEL: 'silent', KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY, ...env });
  const jobs =
    opts.insuranceMappingJob === false ? undefined : startJobs({ db: handle.db, config, engine: handle.engine }, pino({ level: 'silent' }), [insuranceMappingsJob]);
  const app = await buildApp({
    config,
    db: handle.db,
    attachments,
    ...(jobs ? { jobs } : {}),
    ...(opts.practiceEventPollMs ? { practiceEventPollMs: opts.practiceEventPollMs } : {}),
    ...(replica ? { replica } : {}),
    ...(handle.poolStats ? { poolStats: handle.poolStats } : {}),
  }).catch(async (err: unknown) => {
    await jobs?.stop();
    await replica?.close();
    await handle.close();
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  });
  let listening = false;
  return {
    app,
    config,
    handle,
    db: handle.db,
    attachments,
    dataDir,
    async listen() {
      if (!listening) await app.listen({ port, host: '127.0.0.1' });
      listening = true;
      return `http://127.0.0.1:${port}`;
    },
    async close() {
      await jobs?.stop();
      await app.close();
      await replica?.close();
      await handle.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Onboards a developer in the test's environment. */
export function newDeveloper(t: TestApp, name = 'Test developer', redirectUris: string[] = ['http://127.0.0.1:9/callback']): Promise<NewDeveloper> {
  return createDeveloper(t.db, { env: t.config.appEnv, name, redirectUris });
}
