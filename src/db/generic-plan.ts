/**
 * Plan marks: statements that run their generic plan, and statements planned each time (below).
 *
 * Statements that run their generic plan (docs/performance.md, "Plans made once for the hot reads";
 * docs/decisions/0025-generic-plans-per-statement.md, 0027-generic-plans-on-postgresql.md).
 *
 * Under PostgreSQL's default `plan_cache_mode = auto`, a named statement whose generic plan looks
 * costlier than the plans made for its values (an id list, a LIMIT: both unknown to a generic plan)
 * is planned again on every execution. For the service's hottest reads the planning cost more than
 * the execution (the provider-location view: ~1.0 ms planned, ~0.3 ms run on PGlite; ~930 µs
 * against ~100 µs of the server's CPU on PostgreSQL). A statement marked here runs with
 * `plan_cache_mode = force_generic_plan` for its execution alone, on both engines
 * (src/db/pglite-statements.ts; src/db/fast/generic-plan-query.ts); the session keeps `auto` for
 * every other statement, some of whose generic plans are far worse than their custom ones. Only
 * statements whose generic plan is checked by test/directory/read-plans.test.ts or
 * test/db/generic-plans.test.ts are marked. With `DATABASE_PREPARED_STATEMENTS=false` PostgreSQL
 * runs every statement unnamed, planned for its values, and the mark is a comment.
 */
import { sql, type RawBuilder } from 'kysely';

/** The comment a marked statement's text starts with. */
export const GENERIC_PLAN_MARK = '/* generic plan */';

/** `q`, marked to run with its generic plan on the embedded engine. */
export function genericPlan<T>(q: RawBuilder<T>): RawBuilder<T> {
  return sql<T>`${sql.raw(GENERIC_PLAN_MARK)} ${q}`;
}

/** Whether `text` is a marked statement's. */
export function wantsGenericPlan(text: string): boolean {
  return text.startsWith(GENERIC_PLAN_MARK);
}

/**
 * The comment a statement's text starts with when it must be planned for its values on every
 * execution: it runs unnamed on both engines (src/db/pglite-statements.ts,
 * src/db/fast/prepared-statements.ts), so no plan is kept. For statements a background pass repeats
 * over a table that the pass itself fills or empties: a kept plan is made on the table as it was at
 * its first executions (a table analysed while empty is believed empty until it is analysed again),
 * while a statement planned each time is priced on the table's current size (docs/performance.md,
 * "The summary refresh in slices").
 */
export const PLANNED_EACH_TIME_MARK = '/* planned each time */';

/** `q`, marked to be planned for its values on every execution (see `PLANNED_EACH_TIME_MARK`). */
export function plannedEachTime<T>(q: RawBuilder<T>): RawBuilder<T> {
  return sql<T>`${sql.raw(PLANNED_EACH_TIME_MARK)} ${q}`;
}

/** Whether `text` is a statement marked to be planned each time. */
export function wantsPlanEachTime(text: string): boolean {
  return text.startsWith(PLANNED_EACH_TIME_MARK);
}
