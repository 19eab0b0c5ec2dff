/**
 * The embedded engine runs named statements with their generic plan (src/db/database.ts; docs/
 * performance.md, "Generic plans on the embedded engine"), and `explain()` in the tests shows the
 * plan the session runs: with `$n` in its conditions on PGlite, the parameters' values on PostgreSQL
 * (whose first executions are planned for their values).
 */
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { engineName, freshDatabase, type TestDatabase } from '../helpers/db.js';
import { explain, planNodes } from '../helpers/statement-capture.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await freshDatabase();
});
afterAll(async () => t?.close());

describe(`plans of named statements (${engineName})`, () => {
  test('the session plans them once on the embedded engine, per execution as configured on PostgreSQL', async () => {
    const mode = (await sql<{ plan_cache_mode: string }>`SHOW plan_cache_mode`.execute(t.db)).rows[0]!.plan_cache_mode;
    expect(mode).toBe(engineName === 'pglite' ? 'force_generic_plan' : 'auto');
  });

  test('explain() shows the plan the session runs', async () => {
    const q = CompiledQuery.raw('SELECT id FROM providers WHERE env = $1 AND id = ANY($2::text[])', ['sandbox', ["pr_a'1", 'pr_"b']]);
    const plan = await explain(t.db, q, { analyze: true });
    const conds = planNodes(plan).map((n) => String(n['Index Cond'] ?? n.Filter ?? '')).join(' ');
    if (engineName === 'pglite') expect(conds).toMatch(/\$1/);
    else expect(conds).toMatch(/sandbox/);
  });
});
