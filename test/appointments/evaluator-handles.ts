/**
 * Another handle on a test app's database, for the evaluator's tests: on PostgreSQL a second pool
 * (its own connections, as a second process would have) on the test's schema; on PGlite a second
 * Kysely over the same engine (one engine per process: its one session already has the test's
 * schema on its search_path). `wrapDialect` meters it (bench/statement-meter.ts).
 */
import { Kysely, type Dialect } from 'kysely';
import { openDatabase, type Db } from '../../src/db/database.js';
import { PGliteDialect } from '../../src/db/pglite-dialect.js';
import type { Database } from '../../src/db/schema.js';
import type { TestApp } from '../helpers/app.js';
import { testDatabaseUrl, type TestDatabase } from '../helpers/db.js';

export async function otherHandle(t: TestApp, opts: { wrapDialect?: (d: Dialect) => Dialect } = {}): Promise<{ db: Db; close(): Promise<void> }> {
  if (testDatabaseUrl) {
    const schema = (t.handle as TestDatabase).schema;
    if (!schema) throw new Error('the test database has no schema of its own');
    const h = await openDatabase({ databaseUrl: testDatabaseUrl, schema, poolSize: 4, ...(opts.wrapDialect ? { wrapDialect: opts.wrapDialect } : {}) });
    return { db: h.db, close: () => h.close() };
  }
  const dialect = new PGliteDialect(t.handle.pglite!);
  const db = new Kysely<Database>({ dialect: opts.wrapDialect ? opts.wrapDialect(dialect) : dialect });
  // Not destroyed: that would close the engine the test app still uses.
  return { db, close: async () => undefined };
}
