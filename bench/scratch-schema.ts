/**
 * A scratch schema on the benchmark's PostgreSQL server (`BENCH_DATABASE_URL`): created for one run
 * (with the `btree_gist` extension the migrations need) and dropped after it, so runs never see each
 * other's rows. Without a URL the benches use an in-memory PGlite instead.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase, type Db, type DatabaseHandle } from '../src/db/database.js';

/** Creates schema `{prefix}_{random}` on `url`; `drop(db)` removes it through any handle on that server. */
export async function createScratchSchema(url: string, prefix: string): Promise<{ schema: string; drop(db: Db): Promise<void> }> {
  const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query('CREATE EXTENSION IF NOT EXISTS btree_gist');
    await admin.query(`CREATE SCHEMA "${schema}"`);
  } finally {
    await admin.end();
  }
  return { schema, drop: async (db) => void (await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(db)) };
}

/**
 * The benchmark's database: without `url` a PGlite, in a fresh data directory under `pgliteDir`
 * (removed by `close()`) or else in memory; with `url` a scratch schema on `url` whose
 * `close()` drops it. `label` names it in the results.
 */
export async function benchDatabase(
  url: string | undefined,
  opts: { prefix: string; poolSize: number; preparedStatements?: boolean; pgliteDir?: string },
): Promise<DatabaseHandle & { label: string }> {
  if (!url && opts.pgliteDir) {
    const dir = await mkdtemp(join(opts.pgliteDir, `${opts.prefix}-`));
    const h = await openDatabase({ dataDir: dir });
    return { ...h, label: 'PGlite (data directory on disk)', close: async () => { await h.close(); await rm(dir, { recursive: true, force: true }); } };
  }
  if (!url) return { ...(await openDatabase({ inMemory: true })), label: 'PGlite (in memory)' };
  const scratch = await createScratchSchema(url, opts.prefix);
  const h = await openDatabase({ databaseUrl: url, schema: scratch.schema, poolSize: opts.poolSize, ...(opts.preparedStatements !== undefined ? { preparedStatements: opts.preparedStatements } : {}) });
  return {
    ...h,
    label: `PostgreSQL (${new URL(url).host})`,
    close: async () => {
      await scratch.drop(h.db);
      await h.close();
    },
  };
}
