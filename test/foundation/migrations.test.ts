import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest, migrationsCurrent } from '../../src/db/migrate.js';
import { engineName, testDatabaseUrl } from '../helpers/db.js';

/** An empty (unmigrated) database: in-memory PGlite, or a new schema on the PostgreSQL server. */
async function emptyDatabase(): Promise<{ h: DatabaseHandle; drop: () => Promise<void> }> {
  if (!testDatabaseUrl) {
    const h = await openDatabase({ inMemory: true });
    return { h, drop: () => h.close() };
  }
  const schema = `m_${randomBytes(6).toString('hex')}`;
  await admin(async (c) => {
    await c.query('CREATE EXTENSION IF NOT EXISTS btree_gist').catch((e: { code?: string }) => {
      if (e.code !== '23505') throw e;
    });
    await c.query(`CREATE SCHEMA "${schema}"`);
  });
  const h = await openDatabase({ databaseUrl: testDatabaseUrl, schema, poolSize: 4 });
  return {
    h,
    drop: async () => {
      await h.close();
      await admin((c) => c.query(`DROP SCHEMA "${schema}" CASCADE`));
    },
  };
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: testDatabaseUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

describe(`migrations (${engineName})`, () => {
  it('reports an empty database as not current, and a migrated one as current (what /readyz checks)', async () => {
    const { h, drop } = await emptyDatabase();
    try {
      expect(await migrationsCurrent(h.db)).toBe(false);
      expect((await migrateToLatest(h.db)).length).toBeGreaterThan(0);
      expect(await migrationsCurrent(h.db)).toBe(true);
      // Running again applies nothing and changes nothing.
      expect(await migrateToLatest(h.db)).toEqual([]);
      expect(await migrationsCurrent(h.db)).toBe(true);
    } finally {
      await drop();
    }
  });

  // Kysely's own introspection resolved every table of every schema by name; a schema dropped by
  // another connection meanwhile failed the migration ("schema … does not exist"), as parallel test
  // workers did on CI. Migrating must not depend on what other schemas do.
  it.runIf(testDatabaseUrl)('migrates while other schemas are being created and dropped', async () => {
    const churn = Array.from({ length: 24 }, () => `c_${randomBytes(6).toString('hex')}`);
    const tables = Array.from({ length: 8 }, (_, i) => `CREATE TABLE "$S".t${i} (id serial PRIMARY KEY, a int, b text, c int, d text)`);
    await admin(async (c) => {
      for (const s of churn) {
        await c.query(`CREATE SCHEMA "${s}"`);
        for (const t of tables) await c.query(t.replace('$S', s));
      }
    });
    const dropping = admin(async (c) => {
      for (const s of churn) {
        await c.query(`DROP SCHEMA "${s}" CASCADE`);
        await new Promise((r) => setTimeout(r, 5));
      }
    });
    const migrations: Promise<void>[] = [];
    for (let i = 0; i < 3; i++) {
      migrations.push(
        (async () => {
          const { h, drop } = await emptyDatabase();
          try {
            await migrateToLatest(h.db);
            expect(await migrationsCurrent(h.db)).toBe(true);
          } finally {
            await drop();
          }
        })(),
      );
    }
    // Wait for everything before judging, so that a failure leaves no churn schema behind.
    const results = await Promise.allSettled([dropping, ...migrations]);
    await admin(async (c) => {
      for (const s of churn) await c.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    });
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  });
});
