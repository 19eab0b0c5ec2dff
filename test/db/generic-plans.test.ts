/**
 * Statements marked for their generic plan (src/db/generic-plan.ts; docs/performance.md, "Plans made
 * once for the hot reads"): on both engines they run under `force_generic_plan` for their own
 * execution (PGlite: src/db/pglite-statements.ts; PostgreSQL: src/db/fast/generic-plan-query.ts),
 * and the session stays under `auto` for every other statement, whatever the statement did
 * (succeeded, failed, inside a transaction that committed or rolled back). A marked statement
 * answers what the unmarked one does.
 *
 * The plan counts come from `pg_prepared_statements`, which lists the session's named statements
 * with how many generic and custom plans each has run: PGlite is one session, and on PostgreSQL the
 * app here has a pool of one connection, so the counts are the service's.
 */
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { GENERIC_PLAN_MARK, PLANNED_EACH_TIME_MARK, wantsGenericPlan } from '../../src/db/generic-plan.js';
import { loadProviderLocations, loadScheduleData } from '../../src/domain/scheduling/schedule-data.js';
import { loadDurations } from '../../src/domain/scheduling/visit-reason-durations.js';
import { PL, schedulingEnv, type SchedulingEnv } from '../appointments/fixtures.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { explain, planNodes, StatementCapture } from '../helpers/statement-capture.js';

let e: SchedulingEnv;
let db: Db;
beforeAll(async () => {
  e = await schedulingEnv({ poolSize: 1 });
  db = e.t.db;
});
afterAll(async () => e?.close());

interface Counts {
  generic: number;
  custom: number;
}

/** Plans run so far by the named statement of exactly this text. */
async function plans(text: string): Promise<Counts> {
  const r = await sql<{ g: number; c: number }>`
    SELECT generic_plans::int AS g, custom_plans::int AS c FROM pg_prepared_statements WHERE statement = ${text}`.execute(db);
  return { generic: r.rows[0]?.g ?? 0, custom: r.rows[0]?.c ?? 0 };
}

const mode = async (h: Db = db) => (await sql<{ plan_cache_mode: string }>`SHOW plan_cache_mode`.execute(h)).rows[0]!.plan_cache_mode;

/** A statement with an id list (a custom plan knows its length, a generic one does not), unique to this file. */
const LOOKUP = `SELECT id, npi FROM providers WHERE env = $1 AND id = ANY($2::text[]) /* generic-plans.test ${process.pid} */ ORDER BY id`;
const lookup = (marked: boolean, ids: string[]) => CompiledQuery.raw(marked ? `${GENERIC_PLAN_MARK} ${LOOKUP}` : LOOKUP, ['sandbox', ids]);
const FAILING = `SELECT 1 / $1::int AS x /* generic-plans.test failing ${process.pid} */`;

describe(`statements marked for their generic plan (${engineName})`, () => {
  test('answer what the unmarked statement answers, and fail as it fails', async () => {
    const ids = ['pr_ny', 'pr_phx', 'pr_missing'];
    const marked = await db.executeQuery(lookup(true, ids));
    const plain = await db.executeQuery(lookup(false, ids));
    expect(marked.rows.length).toBe(2);
    expect(marked.rows).toEqual(plain.rows);
    await expect(db.executeQuery(CompiledQuery.raw(`${GENERIC_PLAN_MARK} ${FAILING}`, [0]))).rejects.toMatchObject({ code: '22012' });
    expect(await mode()).toBe('auto');
  });

  test('run their generic plan, and the unmarked one its custom plans', async () => {
    const texts = { marked: lookup(true, []).sql, plain: lookup(false, []).sql };
    const before = { marked: await plans(texts.marked), plain: await plans(texts.plain) };
    for (let i = 0; i < 4; i++) {
      await db.executeQuery(lookup(true, ['pr_ny', `pr_x${i}`]));
      await db.executeQuery(lookup(false, ['pr_ny', `pr_x${i}`]));
    }
    const delta = async (k: 'marked' | 'plain') => {
      const now = await plans(texts[k]);
      return { generic: now.generic - before[k].generic, custom: now.custom - before[k].custom };
    };
    expect(await delta('marked')).toEqual({ generic: 4, custom: 0 });
    // The unmarked text: PostgreSQL's `auto` plans the first five executions for their values.
    expect(await delta('plain')).toEqual({ generic: 0, custom: 4 });
    expect(await mode()).toBe('auto');
  });

  test('a marked statement that cannot be parsed fails the same way each time, and one whose parameter cannot be sent fails alone', async () => {
    const missing = CompiledQuery.raw(`${GENERIC_PLAN_MARK} SELECT id FROM no_such_table_${process.pid} WHERE id = $1`, ['x']);
    // Twice: the second run parses again (it is not taken for a statement the session has).
    await expect(db.executeQuery(missing)).rejects.toMatchObject({ code: '42P01' });
    await expect(db.executeQuery(missing)).rejects.toMatchObject({ code: '42P01' });
    expect(await mode()).toBe('auto');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(db.executeQuery(CompiledQuery.raw(`${GENERIC_PLAN_MARK} SELECT $1::jsonb AS j /* generic-plans.test cyclic */`, [cyclic]))).rejects.toThrow(/circular|cyclic/i);
    // The session (the one connection on PostgreSQL) goes on answering, under auto.
    expect((await db.executeQuery(lookup(true, ['pr_ny']))).rows.length).toBe(1);
    expect(await mode()).toBe('auto');
  });

  test('leave the session under auto after a failure inside a transaction, and after a commit', async () => {
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.executeQuery(lookup(true, ['pr_ny']));
        await trx.executeQuery(CompiledQuery.raw(`${GENERIC_PLAN_MARK} ${FAILING}`, [0]));
      }),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await mode()).toBe('auto');
    const inside = await db.transaction().execute(async (trx) => {
      const r = await trx.executeQuery(lookup(true, ['pr_ny']));
      return { rows: r.rows.length, mode: await mode(trx) };
    });
    expect(inside).toEqual({ rows: 1, mode: 'auto' });
    expect(await mode()).toBe('auto');
  });

  test("the tests' explain() shows the plan the engine runs: generic for a marked statement", async () => {
    const conditions = async (marked: boolean) => {
      const plan = await explain(db, lookup(marked, ["pr_a'1", 'pr_"b']), { analyze: true });
      return planNodes(plan).map((n) => String(n['Index Cond'] ?? n.Filter ?? '')).join(' ');
    };
    expect(await conditions(false)).toMatch(/sandbox/);
    expect(await conditions(true)).toMatch(/\$1/);
  });

  // On this small directory `auto` picks the contexts' generic plan by itself (on ~5,000
  // provider-locations it planned them 60 times in 60, measured), so what is checked here is that
  // the statement is marked; its generic plan is checked in test/directory/read-plans.test.ts.
  test('the provider-location contexts (a reschedule, a practice move) run a marked statement', async () => {
    const capture = new StatementCapture();
    const statements = await capture.during(db, async () => {
      expect((await loadProviderLocations(capture.on(db), 'sandbox', [PL.ny, PL.phx])).size).toBe(2);
    });
    expect(statements.map((q) => wantsGenericPlan(q.sql))).toEqual([true]);
  });

  // The schedule data of a reschedule's day, a calendar's week, availability's lists and the
  // summary refresh: one statement in four forms (held time read or not, weekly blocks read or
  // given), each marked; and a reschedule's read, repeated for other days, plans nothing again.
  test('the schedule data runs a marked statement in each of its forms, planned once', async () => {
    const capture = new StatementCapture();
    const pls = await loadProviderLocations(db, 'sandbox', [PL.ny, PL.phx]);
    const day = 86_400_000;
    const from = Date.now() + day;
    const load = (i: number, withHolds: boolean, blocks?: Map<string, never[]>) =>
      loadScheduleData(capture.on(db), 'sandbox', pls, { fromMs: from + i * day, toMs: from + (i + 1) * day }, { withHolds, visitReasonIds: ['pc_t30'], ...(blocks ? { blocks } : {}) });
    const forms = await capture.during(db, async () => {
      for (const withHolds of [true, false]) for (const blocks of [undefined, new Map()]) await load(0, withHolds, blocks);
    });
    expect(new Set(forms.map((q) => q.sql)).size).toBe(4);
    expect(forms.map((q) => wantsGenericPlan(q.sql))).toEqual([true, true, true, true]);
    const text = forms[2]!.sql;
    const before = await plans(text);
    for (let i = 1; i <= 8; i++) await load(i, false);
    const now = await plans(text);
    expect({ generic: now.generic - before.generic, custom: now.custom - before.custom }).toEqual({ generic: 8, custom: 0 });
  });

  // What a reschedule checks its visit reason against (one provider-location) and the durations alone
  // (no provider-location): both forms marked; repeated for other reasons, planned once.
  test('the visit reason durations run a marked statement in both forms, planned once', async () => {
    const capture = new StatementCapture();
    const forms = await capture.during(db, async () => {
      expect((await loadDurations(capture.on(db), 'sandbox', [PL.ny], ['pc_t30'])).durations.size).toBe(1);
      await loadDurations(capture.on(db), 'sandbox', [], ['pc_t30']);
    });
    expect(forms.map((q) => wantsGenericPlan(q.sql))).toEqual([true, true]);
    const text = forms[0]!.sql;
    const before = await plans(text);
    for (let i = 1; i <= 8; i++) await loadDurations(db, 'sandbox', [PL.ny], [`pc_other_${i}`]);
    const now = await plans(text);
    expect({ generic: now.generic - before.generic, custom: now.custom - before.custom }).toEqual({ generic: 8, custom: 0 });
  });

  // The reads whose statements PostgreSQL's `auto` planned again on every execution (measured:
  // 12 custom plans in 12 executions each), now marked: repeated, no statement they run is planned
  // again once each has run five times.
  test('the directory and availability reads run no custom plan once warm', async () => {
    const id = encodeURIComponent(PL.ny);
    const reads = [
      `/v1/provider_locations/${id}`,
      '/v1/schedulable_entities?page_size=100',
      `/v1/provider_locations/availability?provider_location_ids=${id}&visit_reason_id=pc_t30&patient_type=new`,
    ];
    const run = async () => {
      for (const url of reads) {
        const res = await e.t.app.inject({ url, headers: bearer(e.token) });
        expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      }
    };
    for (let round = 0; round < 6; round++) await run();
    const plansOf = async () =>
      (await sql<{ statement: string; custom_plans: number; generic_plans: number }>`
        SELECT statement, custom_plans::int, generic_plans::int FROM pg_prepared_statements`.execute(db)).rows;
    const before = new Map((await plansOf()).map((r) => [r.statement, r]));
    for (let round = 0; round < 6; round++) await run();
    // Statements that had run five times by then: every statement of the reads (six rounds). A
    // background flush of the same session (the request log's, every 250 ms) may not have, and
    // `auto` plans the first five executions of any statement for their values.
    const replanned = (await plansOf()).filter((r) => {
      const was = before.get(r.statement);
      return was !== undefined && was.custom_plans + was.generic_plans >= 5 && r.custom_plans > was.custom_plans;
    });
    expect(replanned.map((r) => `${r.custom_plans - before.get(r.statement)!.custom_plans} custom plans: ${r.statement.replace(/\s+/g, ' ').slice(0, 200)}`)).toEqual([]);
  });
});

describe(`statements marked to be planned each time (${engineName})`, () => {
  test('run unnamed: they answer what the unmarked statement answers, and the session keeps no statement (nor plan) of theirs', async () => {
    const ids = ['pr_ny', 'pr_phx', 'pr_missing'];
    const marked = `${PLANNED_EACH_TIME_MARK} ${LOOKUP}`;
    const kept = async (text: string) =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = ${text}`.execute(db)).rows[0]!.n;
    for (let i = 0; i < 3; i++) {
      const a = await db.executeQuery(CompiledQuery.raw(marked, ['sandbox', ids]));
      expect(a.rows.length).toBe(2);
      expect(a.rows).toEqual((await db.executeQuery(lookup(false, ids))).rows);
    }
    expect(await kept(LOOKUP)).toBe(1);
    expect(await kept(marked)).toBe(0);
    await expect(db.executeQuery(CompiledQuery.raw(`${PLANNED_EACH_TIME_MARK} ${FAILING}`, [0]))).rejects.toMatchObject({ code: '22012' });
    expect(await mode()).toBe('auto');
  });
});
