/**
 * Builds one migrated PGlite data directory per test run and dumps it to a file; every test worker
 * loads a copy (a fresh PGlite directory costs seconds and hundreds of MB, a copy costs a fraction).
 * Also measures one start-up (a database created and migrated, an app made ready over it), from which
 * test/helpers/timeouts.ts scales the run's timeouts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { buildApp } from '../../src/http/app.js';

/**
 * What the start-up below takes on this machine when it is idle: a new PGlite created and migrated
 * (~4.5 s) or a PostgreSQL schema migrated (~0.8 s), plus the app made ready (~0.8 s).
 */
const IDLE_STARTUP_MS = { pglite: 5_500, postgres: 1_600 };

let dir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  const t0 = performance.now();
  let file = '';
  if (url) {
    await withPostgresSchema(url, startApp);
  } else {
    // Measured on the template's own creation: loading a dump leaves a PGlite timer behind that
    // would keep this (main) process from exiting.
    const handle = await openDatabase({ inMemory: true });
    await migrateToLatest(handle.db);
    await startApp(handle);
    dir = await mkdtemp(join(tmpdir(), 'carebook-template-'));
    const dump = await handle.pglite!.dumpDataDir('none');
    file = join(dir, 'template.tar');
    await writeFile(file, Buffer.from(await dump.arrayBuffer()));
    await handle.close();
  }
  const startupMs = Math.round(performance.now() - t0);
  const slowdown = Math.max(1, startupMs / IDLE_STARTUP_MS[url ? 'postgres' : 'pglite']);
  project.provide('pgliteTemplate', file);
  project.provide('timeoutScale', slowdown);
  console.log(`test start-up: ${startupMs} ms (idle: ~${IDLE_STARTUP_MS[url ? 'postgres' : 'pglite']} ms); timeouts x${slowdown.toFixed(2)}`);
}

/** An app built and made ready over the database, as every test file does. */
async function startApp(handle: DatabaseHandle): Promise<void> {
  const config = loadConfig({ LOG_LEVEL: 'silent', ADMIN_TOKEN: 'startup-measure-0123456789abcdef', KEY_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') });
  const app = await buildApp({ config, db: handle.db });
  await app.ready();
  await app.close();
}

async function withPostgresSchema(url: string, use: (handle: DatabaseHandle) => Promise<void>): Promise<void> {
  const schema = `startup_${process.pid}`;
  const admin = await openDatabase({ databaseUrl: url, poolSize: 1 });
  try {
    await sql`CREATE EXTENSION IF NOT EXISTS btree_gist`.execute(admin.db).catch(() => undefined);
    await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(admin.db);
    await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(admin.db);
    const handle = await openDatabase({ databaseUrl: url, schema, poolSize: 2 });
    try {
      await migrateToLatest(handle.db);
      await use(handle);
    } finally {
      await handle.close();
    }
  } finally {
    await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(admin.db).catch(() => undefined);
    await admin.close();
  }
}

export async function teardown(): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    timeoutScale: number;
  }
}
