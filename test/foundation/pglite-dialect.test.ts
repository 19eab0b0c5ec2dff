/**
 * The embedded engine's dialect runs each statement as a named prepared statement in one call into
 * PGlite (src/db/pglite-statements.ts). What it returns and throws must be what `PGlite.query()`
 * returns and throws, on the same statements (docs/performance.md, "The embedded engine's dialect").
 * PGlite only: on PostgreSQL the dialect is Kysely's own.
 */
import type { PGlite } from '@electric-sql/pglite';
import { CompiledQuery } from 'kysely';
import { serialize } from 'pg-protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { statementsOf } from '../../src/db/pglite-statements.js';
import { engineName, freshDatabase, type TestDatabase } from '../helpers/db.js';

/** Runs `text` with `params` through the dialect (Kysely) and returns the rows. */
async function viaDialect(db: Db, text: string, params: unknown[] = []): Promise<unknown[]> {
  const { rows } = await db.executeQuery(CompiledQuery.raw(text, params));
  return rows;
}

async function errorOf(p: Promise<unknown>): Promise<Record<string, unknown>> {
  const e = (await p.then(
    () => undefined,
    (err: unknown) => err,
  )) as Record<string, unknown> | undefined;
  if (!e) throw new Error('expected the statement to fail');
  return e;
}

function errorFields(e: Record<string, unknown>) {
  const { code, message, constraint, detail, table, schema, column, severity, position, query, params } = e;
  return { class: (e as object).constructor, code, message, constraint, detail, table, schema, column, severity, position, query, params };
}

async function preparedCount(pglite: PGlite, text: string): Promise<number> {
  const { rows } = await pglite.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1', [text]);
  return rows[0]!.n;
}

describe.skipIf(engineName !== 'pglite')('PGlite dialect: one engine call per statement', () => {
  let h: TestDatabase;
  let pglite: PGlite;
  beforeEach(async () => {
    h = await freshDatabase();
    pglite = h.pglite!;
    await pglite.exec(`
      CREATE TABLE dialect_types (
        id int8 PRIMARY KEY, ts timestamptz, d date, lt timestamp, n numeric, b bool, j json, jb jsonb,
        arr text[], ints int4[], by bytea, t text, f float8, i int4, u uuid, iv interval, r tstzrange
      );
      INSERT INTO dialect_types VALUES
        (1, '2026-03-01 09:30:00.123+01', '2026-03-01', '2026-03-01 09:30:00', 12345.6789, true, '{"a":[1,2]}',
         '{"b":{"c":null}}', ARRAY['x','y,z','"q"'], ARRAY[1,2,3], '\\x00ff10', 'héllo', 1.5, 42,
         '8b0f7e0e-5a3c-4c6e-9f55-3f2b1b0c7d11', '1 day 02:00', '[2026-03-01 09:00+00,2026-03-01 10:00+00)'),
        (9007199254740993, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    `);
  });
  afterEach(async () => h.close());

  it('returns the values PGlite.query() returns, type for type', async () => {
    const text = 'SELECT * FROM dialect_types ORDER BY id';
    const mine = await viaDialect(h.db, text);
    const theirs = (await pglite.query(text)).rows;
    expect(mine).toEqual(theirs);
    const [full, empty] = mine as Record<string, unknown>[];
    expect(full!.ts).toBeInstanceOf(Date);
    expect(full!.d).toBe('2026-03-01'); // date kept as text (src/db/database.ts)
    expect(full!.lt).toBe('2026-03-01 09:30:00');
    expect(full!.j).toEqual({ a: [1, 2] });
    expect(full!.arr).toEqual(['x', 'y,z', '"q"']);
    expect(full!.ints).toEqual([1, 2, 3]);
    expect(full!.by).toEqual(new Uint8Array([0, 255, 16]));
    expect(typeof empty!.id).toBe(typeof (theirs[1] as Record<string, unknown>).id);
    expect(Object.values(empty!).filter((v) => v === null)).toHaveLength(16);
  });

  it('serializes parameters as PGlite.query() does, and reports the same affected rows', async () => {
    const params = [
      new Date('2026-04-02T08:15:00.5Z'),
      '2026-04-02',
      '99.50',
      false,
      { k: ['v', 1, null] },
      [{ nested: true }],
      ['a', 'b c', null],
      [7, 8],
      new Uint8Array([1, 2, 3]),
      "it's",
      2.25,
      3,
    ];
    const insert = (id: number) =>
      `INSERT INTO dialect_types (id, ts, d, n, b, j, jb, arr, ints, by, t, f, i) VALUES (${id}, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`;
    const mine = (await h.db.executeQuery(CompiledQuery.raw(insert(3), params))) as { rows: Record<string, unknown>[]; numAffectedRows?: bigint };
    const theirs = await pglite.query<Record<string, unknown>>(insert(4), params);
    expect(mine.numAffectedRows).toBe(BigInt(theirs.affectedRows!));
    expect({ ...mine.rows[0], id: 0 }).toEqual({ ...theirs.rows[0], id: 0 });
    const upd = (await h.db.executeQuery(CompiledQuery.raw('UPDATE dialect_types SET t = $1 WHERE id > $2', ['u', 2]))) as { numAffectedRows?: bigint };
    expect(upd.numAffectedRows).toBe(3n);
    const sel = (await h.db.executeQuery(CompiledQuery.raw('SELECT id FROM dialect_types WHERE id = $1', [3]))) as { numAffectedRows?: bigint };
    expect(sel.numAffectedRows).toBe(BigInt((await pglite.query('SELECT id FROM dialect_types WHERE id = $1', [3])).affectedRows!));
  });

  it('throws the errors PGlite.query() throws: same class, code, message, constraint', async () => {
    const dup = 'INSERT INTO dialect_types (id, t) VALUES ($1, $2)';
    const mine = await errorOf(viaDialect(h.db, dup, [1, 'again']));
    const theirs = await errorOf(pglite.query(dup, [1, 'again']));
    expect(mine.code).toBe('23505');
    expect(errorFields(mine)).toEqual(errorFields(theirs));
    // The same failing text again: still the same error (its prepared form is intact).
    expect(errorFields(await errorOf(viaDialect(h.db, dup, [1, 'again'])))).toEqual(errorFields(theirs));

    await pglite.exec('CREATE TABLE dialect_ex (r tstzrange, EXCLUDE USING gist (r WITH &&))');
    const ex = 'INSERT INTO dialect_ex VALUES (tstzrange($1::timestamptz, $2::timestamptz))';
    await viaDialect(h.db, ex, ['2026-01-01T10:00Z', '2026-01-01T11:00Z']);
    const exMine = await errorOf(viaDialect(h.db, ex, ['2026-01-01T10:30Z', '2026-01-01T11:30Z']));
    const exTheirs = await errorOf(pglite.query(ex, ['2026-01-01T10:30Z', '2026-01-01T11:30Z']));
    expect(exMine.code).toBe('23P01');
    expect(errorFields(exMine)).toEqual(errorFields(exTheirs));

    for (const bad of ['SELECT 1/0', 'SELEC 1', 'SELECT * FROM dialect_nothing WHERE id = $1']) {
      const params = bad.includes('$1') ? [1] : [];
      expect(errorFields(await errorOf(viaDialect(h.db, bad, params)))).toEqual(errorFields(await errorOf(pglite.query(bad, params))));
    }
  });

  it('reads an answer the engine hands over in many chunks, multibyte text across their edges, as PGlite.query() does', async () => {
    // ~8 MB of rows: far more than one chunk of the engine's output (the test checks that it was).
    const text = "SELECT g AS n, repeat('é€😀', 40 + g % 7) AS t, NULL::text AS z FROM generate_series(1, $1::int) g";
    let chunks = 0;
    await pglite.execProtocolRawStream(
      Buffer.concat([serialize.parse({ text: text.replace('$1::int', '20000') }), serialize.bind({}), serialize.execute(), serialize.sync()]),
      { syncToFs: false, onRawData: () => void chunks++ },
    );
    expect(chunks).toBeGreaterThan(1);
    const mine = await viaDialect(h.db, text, [20000]);
    const theirs = (await pglite.query(text, [20000])).rows;
    expect(mine).toHaveLength(20000);
    expect(mine).toEqual(theirs);
  });

  it('passes over notices within an answer, as PGlite.query() does', async () => {
    await pglite.exec(`CREATE FUNCTION dialect_noisy(x int) RETURNS int LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'noisy %', x; RETURN x * 2; END $$`);
    const text = 'SELECT dialect_noisy(g) AS v FROM generate_series(1, $1::int) g';
    expect(await viaDialect(h.db, text, [3])).toEqual((await pglite.query(text, [3])).rows);
  });

  it('parses a text once and reuses its named statement', async () => {
    const cache = statementsOf(pglite);
    const text = 'SELECT id, t FROM dialect_types WHERE id = $1 /* reuse */';
    const before = cache.parses;
    for (let i = 0; i < 5; i++) await viaDialect(h.db, text, [i % 2 ? 1 : 2]);
    expect(cache.parses - before).toBe(1);
    expect(await preparedCount(pglite, text)).toBe(1);
    // Inside a transaction too, and a statement first prepared in a rolled-back transaction stays usable.
    const inTx = 'SELECT t FROM dialect_types WHERE id = $1 /* tx */';
    await h.db
      .transaction()
      .execute(async (trx) => {
        await viaDialect(trx, text, [1]);
        await viaDialect(trx, inTx, [1]);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(cache.parses - before).toBe(2);
    expect(await viaDialect(h.db, inTx, [1])).toEqual([{ t: 'héllo' }]);
    expect(cache.parses - before).toBe(2);
  });

  it('does not remember a statement whose Parse failed', async () => {
    const cache = statementsOf(pglite);
    const text = 'SELECT x FROM dialect_later WHERE x = $1';
    expect((await errorOf(viaDialect(h.db, text, [1]))).code).toBe('42P01');
    expect(await preparedCount(pglite, text)).toBe(0);
    await pglite.exec('CREATE TABLE dialect_later (x int); INSERT INTO dialect_later VALUES (1)');
    const parses = cache.parses;
    // Inside a transaction nothing is retried: this passes only if the failed name was not kept.
    const rows = await h.db.transaction().execute((trx) => viaDialect(trx, text, [1]));
    expect(rows).toEqual([{ x: 1 }]);
    expect(cache.parses - parses).toBe(1);
  });

  it('prepares a statement again when its table changed or was dropped', async () => {
    const text = 'SELECT * FROM dialect_alter WHERE id = $1';
    await pglite.exec("CREATE TABLE dialect_alter (id int PRIMARY KEY); INSERT INTO dialect_alter VALUES (1)");
    expect(await viaDialect(h.db, text, [1])).toEqual([{ id: 1 }]);
    await pglite.exec("ALTER TABLE dialect_alter ADD COLUMN extra text DEFAULT 'x'");
    expect(await viaDialect(h.db, text, [1])).toEqual([{ id: 1, extra: 'x' }]);
    await pglite.exec("DROP TABLE dialect_alter; CREATE TABLE dialect_alter (id text, other int); INSERT INTO dialect_alter VALUES ('1', 5)");
    expect(await viaDialect(h.db, text, ['1'])).toEqual([{ id: '1', other: 5 }]);
    expect(await preparedCount(pglite, text)).toBe(1);
  });

  it('keeps at most its bound of named statements on the server', async () => {
    const cache = statementsOf(pglite);
    for (let i = 0; i < cache.max + 20; i++) await viaDialect(h.db, `SELECT ${i} AS n WHERE $1::int = 1`, [1]);
    expect(cache.size).toBe(cache.max);
    const { rows } = await pglite.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'cbs\\_%'");
    expect(rows[0]!.n).toBeLessThanOrEqual(cache.max);
    expect(await viaDialect(h.db, `SELECT ${cache.max + 19} AS n WHERE $1::int = 1`, [1])).toEqual([{ n: cache.max + 19 }]);
  });

  it('keeps interleaved transactions and plain statements apart', async () => {
    const n = 30;
    const text = 'INSERT INTO dialect_types (id, t) VALUES ($1, $2)';
    const work = Array.from({ length: n }, (_, i) =>
      i % 3 === 0
        ? viaDialect(h.db, text, [100 + i, 'plain'])
        : h.db.transaction().execute(async (trx) => {
            await viaDialect(trx, text, [100 + i, 'tx']);
            await new Promise((r) => setTimeout(r, i % 4));
            await viaDialect(trx, 'UPDATE dialect_types SET t = $1 WHERE id = $2', ['tx-done', 100 + i]);
            if (i % 3 === 2) throw new Error('roll back');
          }),
    );
    await Promise.allSettled(work);
    const rows = (await viaDialect(h.db, 'SELECT id, t FROM dialect_types WHERE id BETWEEN $1 AND $2 ORDER BY id', [100, 1000])) as { id: unknown; t: string }[];
    const expected = Array.from({ length: n }, (_, i) => i)
      .filter((i) => i % 3 !== 2)
      .map((i) => ({ id: 100 + i, t: i % 3 === 0 ? 'plain' : 'tx-done' }));
    expect(rows.map((r) => ({ id: Number(r.id), t: r.t }))).toEqual(expected);
  });
});
