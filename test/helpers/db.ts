/**
 * A fresh, migrated database for one test: a new schema, migrated, on the PostgreSQL server named by
 * `TEST_DATABASE_URL`, or, by default, a new schema in the one PGlite instance this test worker shares
 * between its test files (the suite runs with `isolate: false`, so the instance outlives a file).
 * Opening a PGlite costs ~1.5 s of CPU and ~260 MB that a closed instance does not give back; a schema
 * costs ~0.4 s and is dropped on close. A second database wanted while the shared one is in use (a
 * test holding two apps at once) gets its own PGlite, loaded from the run's migrated template.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { PGliteDialect } from '../../src/db/pglite-dialect.js';
import type { Database } from '../../src/db/schema.js';

export const testDatabaseUrl = process.env.TEST_DATABASE_URL || undefined;
export const engineName = testDatabaseUrl ? 'postgres' : 'pglite';

export type TestDatabase = DatabaseHandle & { schema?: string };

/** Opens an isolated, migrated database. Close it with `handle.close()`. */
export async function freshDatabase(opts: { poolSize?: number } = {}): Promise<TestDatabase> {
  if (testDatabaseUrl) return postgresSchema(testDatabaseUrl, opts.poolSize ?? 10);
  if (worker.sharedInUse) return dedicatedPGlite();
  worker.sharedInUse = true;
  try {
    return await sharedPGliteSchema();
  } catch (e) {
    worker.sharedInUse = false;
    throw e;
  }
}

/** State of this test worker (one process, many files): the template's bytes and the shared PGlite. */
const worker: { templateBytes?: Buffer; shared?: Promise<PGlite>; sharedInUse: boolean } = { sharedInUse: false };

async function template(): Promise<Blob> {
  worker.templateBytes ??= await readFile(inject('pgliteTemplate'));
  return new Blob([new Uint8Array(worker.templateBytes)]);
}

/** A PGlite of its own, migrated (a copy of the run's template). */
async function dedicatedPGlite(): Promise<TestDatabase> {
  return openDatabase({ inMemory: true, loadDataDir: await template() });
}

/**
 * The worker's PGlite with `public` emptied (as on the PostgreSQL server: only btree_gist there), so
 * that each test's schema is found first on the search_path and migrated on its own.
 */
async function sharedPGlite(): Promise<PGlite> {
  worker.shared ??= (async () => {
    const handle = await dedicatedPGlite();
    await handle.pglite!.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public; CREATE EXTENSION btree_gist SCHEMA public');
    return handle.pglite!;
  })();
  return worker.shared;
}

async function sharedPGliteSchema(): Promise<TestDatabase> {
  const pglite = await sharedPGlite();
  const schema = `t_${randomBytes(6).toString('hex')}`;
  // One session: the search_path set here holds until this database is closed (then the next file sets its own).
  await pglite.exec(`CREATE SCHEMA "${schema}"; SET search_path TO "${schema}", public`);
  let closed = false;
  // Not destroyed on close (that would close the shared PGlite); refuses queries once closed instead,
  // so that a loop a test forgot to stop fails loudly rather than writing into the next file's schema.
  const db = new Kysely<Database>({
    dialect: new PGliteDialect(pglite),
    plugins: [
      {
        transformQuery: (args) => {
          if (closed) throw new Error(`test database ${schema} is closed`);
          return args.node;
        },
        transformResult: async (args) => args.result,
      },
    ],
  });
  const close = async () => {
    if (closed) return;
    closed = true;
    try {
      await pglite.exec(`SET search_path TO public; DROP SCHEMA "${schema}" CASCADE`);
    } finally {
      worker.sharedInUse = false;
    }
  };
  try {
    await migrateToLatest(db);
  } catch (e) {
    await close();
    throw e;
  }
  return { db, engine: 'pglite', pglite, schema, close };
}

async function postgresSchema(url: string, poolSize: number): Promise<TestDatabase> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    // Parallel workers may race to create the extension: the loser's unique violation is harmless.
    await admin.query('CREATE EXTENSION IF NOT EXISTS btree_gist').catch((e: { code?: string }) => {
      if (e.code !== '23505') throw e;
    });
    await admin.query(`CREATE SCHEMA "${schema}"`);
  } finally {
    await admin.end();
  }
  const handle = await openDatabase({ databaseUrl: url, schema, poolSize });
  try {
    await migrateToLatest(handle.db);
  } catch (e) {
    // Leave nothing behind: a stray schema would outlive the run.
    await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(handle.db).catch(() => undefined);
    await handle.close();
    throw e;
  }
  return {
    ...handle,
    schema,
    close: async () => {
      await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(handle.db).catch(() => undefined);
      await handle.close();
    },
  };
}
