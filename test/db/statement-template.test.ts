/**
 * Statements compiled once (src/db/fast/statement-template.ts): a template's text and parameters
 * are what Kysely compiles for the same values, values used through a marker land in every place
 * they are used, and a value the template cannot trace to a slot is refused when it is made.
 */
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statementTemplate } from '../../src/db/fast/statement-template.js';
import type { Database } from '../../src/db/schema.js';
import { directoryDurationsJsonSql } from '../../src/domain/scheduling/visit-reason-durations.js';
import { engineName, freshDatabase, type TestDatabase } from '../helpers/db.js';

describe(`statement templates (${engineName})`, () => {
  let t: TestDatabase;
  let db: Kysely<Database>;
  beforeAll(async () => {
    t = await freshDatabase();
    db = t.db;
  });
  afterAll(async () => t.close());

  const build = (env: never, ids: never, at: never) =>
    sql`SELECT ${env}::text AS env, ${directoryDurationsJsonSql(env, ids)} AS durations, ${at}::timestamptz AS at, ${'fixed'}::text AS fixed, ${2}::int AS two`;

  it('compiles to the text and parameters Kysely compiles for the same values', () => {
    const template = statementTemplate(['env', 'ids', 'at'], (p) => build(p.env, p.ids, p.at));
    const at = new Date('2026-11-27T12:00:00Z');
    const values = { env: 'sandbox', ids: ['vr_a', 'vr_b'], at };
    const direct = build('sandbox' as never, ['vr_a', 'vr_b'] as never, at as never).compile(db);
    const q = template(values);
    expect(q.sql).toBe(direct.sql);
    expect(q.parameters).toEqual(direct.parameters);
    // The environment is used twice (once in the fragment): both places get it.
    expect(q.parameters.filter((v) => v === 'sandbox')).toHaveLength(2);
  });

  it('runs on the database with new values on every call', async () => {
    const template = statementTemplate(['env', 'ids', 'at'], (p) => build(p.env, p.ids, p.at));
    for (const env of ['sandbox', 'production']) {
      const { rows } = await db.executeQuery<{ env: string; fixed: string; two: number; at: Date }>(template({ env, ids: [], at: new Date(0) }));
      expect(rows[0]).toMatchObject({ env, fixed: 'fixed', two: 2 });
      expect(new Date(rows[0]!.at).getTime()).toBe(0);
    }
  });

  it('refuses a value computed from a marker, which it could not fill in', () => {
    expect(() => statementTemplate(['id'], (p) => sql`SELECT ${[p.id]}::text[]`)).toThrow(/neither a slot's marker nor a constant/);
    expect(() => statementTemplate(['at'], () => sql`SELECT ${new Date(0)}::timestamptz`)).toThrow(/neither a slot's marker nor a constant/);
  });
});
