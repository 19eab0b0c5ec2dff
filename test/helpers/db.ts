/**
 * A fresh, migrated database for one test: a copy of the PGlite template by default, or a new
 * schema on the PostgreSQL server named by `TEST_DATABASE_URL`.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

export const testDatabaseUrl = process.env.TEST_DATABASE_URL || undefined;
export const engineName = testDatabaseUrl ? 'postgres' : 'pglite';

let templateBytes: Buffer | undefined;

/** Opens an isolated, migrated database. Close it with `handle.close()`. */
export async function freshDatabase(opts: { poolSize?: number } = {}): Promise<DatabaseHandle & { schema?: string }> {
  if (testDatabaseUrl) {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: testDatabaseUrl });
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
    const handle = await openDatabase({ databaseUrl: testDatabaseUrl, schema, poolSize: opts.poolSize ?? 10 });
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
  templateBytes ??= await readFile(inject('pgliteTemplate'));
  return openDatabase({ inMemory: true, loadDataDir: new Blob([new Uint8Array(templateBytes)]) });
}
