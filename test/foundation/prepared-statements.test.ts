/** Named (prepared) statements on PostgreSQL (src/db/fast/prepared-statements.ts). */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { StatementNames } from '../../src/db/fast/prepared-statements.js';
import { engineName, freshDatabase, testDatabaseUrl } from '../helpers/db.js';

describe('statement names', () => {
  it('gives one stable name per text, and none past the bound or for very long texts', () => {
    const names = new StatementNames(2);
    const a = names.nameFor('SELECT $1::int');
    expect(a).toMatch(/^cb_/);
    expect(names.nameFor('SELECT $1::int')).toBe(a);
    expect(names.nameFor('SELECT $1::text')).not.toBe(a);
    expect(names.nameFor('SELECT $1::bigint')).toBeUndefined();
    expect(names.size).toBe(2);
    expect(new StatementNames().nameFor(`SELECT ${'1 + '.repeat(5000)}$1::int`)).toBeUndefined();
  });
});

describe.runIf(testDatabaseUrl)(`prepared statements (${engineName})`, () => {
  let h: DatabaseHandle;
  beforeAll(async () => {
    h = await freshDatabase({ poolSize: 1 });
  });
  afterAll(async () => h.close());

  it('prepares parameterized statements once per connection and reuses them', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await sql<{ n: number }>`SELECT ${i}::int + 1 AS n`.execute(h.db)).rows[0]!.n).toBe(i + 1);
    }
    const prepared = await sql<{ name: string; statement: string }>`SELECT name, statement FROM pg_prepared_statements`.execute(h.db);
    const ours = prepared.rows.filter((r) => r.statement.includes('::int + 1 AS n'));
    expect(ours).toHaveLength(1);
    expect(ours[0]!.name).toMatch(/^cb_/);
  });

  it('still runs parameterless multi-statement scripts (simple protocol) and transactions', async () => {
    await sql`CREATE TEMP TABLE ps_probe (x int); INSERT INTO ps_probe VALUES (1), (2)`.execute(h.db);
    const n = await h.db.transaction().execute(async (trx) => (await sql<{ n: string }>`SELECT count(*) AS n FROM ps_probe WHERE x > ${0}`.execute(trx)).rows[0]!.n);
    expect(Number(n)).toBe(2);
  });
});
