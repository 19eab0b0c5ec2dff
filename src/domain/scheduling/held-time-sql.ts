/**
 * Held time of a set of providers over a window, read one provider at a time
 * (docs/performance.md, "Held time read one provider at a time").
 *
 * `appointment_holds` is indexed by its exclusion constraint alone, a GiST index over
 * `(env, provider_id, during, appointment_id)`. GiST takes `provider_id = ANY(<array>)` as an index
 * condition only in a bitmap scan. Once the table is all-visible (after any VACUUM, as autovacuum and
 * the embedded engine's maintenance leave it), an index-only scan looks cheaper, and a plan that does
 * not know the array's length (a generic plan, which the schedule reads run) then reads the index by
 * environment and window alone and filters the providers: every hold of every provider in the window,
 * for one provider's availability (measured on the bench's data: 13,149 holds read and filtered out
 * for a provider holding none, 8–9 ms a read instead of well under one). Here each provider is its own probe of the index, by
 * environment, provider and window, so a read costs what the providers asked for hold, whatever the
 * table holds besides. `OFFSET 0` keeps the probe a subquery the planner cannot flatten into a join
 * (which it could again answer with one scan of the window).
 */
import { sql, type RawBuilder } from 'kysely';
import type { Env } from '../../db/schema.js';

/**
 * `FROM` items naming each distinct provider of the array expression `providers` as `hp.provider_id`
 * and each of its holds over `[from, to)` as `h` (`h.appointment_id`, `h.during`).
 */
export function heldTimeFromSql(env: Env, providers: RawBuilder<unknown>, from: Date, to: Date): RawBuilder<unknown> {
  return sql`(SELECT DISTINCT unnest(${providers}) AS provider_id) hp
    CROSS JOIN LATERAL (
      SELECT hh.appointment_id, hh.during FROM appointment_holds hh
      WHERE hh.env = ${env} AND hh.provider_id = hp.provider_id AND hh.during && tstzrange(${from}, ${to})
      OFFSET 0) h`;
}

/**
 * The held time of `providers` over `[from, to)` as one JSON array of `[provider_id, start_ms, end_ms]`
 * in provider and start order, or NULL when there is none.
 */
export function heldTimeJsonSql(env: Env, providers: RawBuilder<unknown>, from: Date, to: Date): RawBuilder<unknown> {
  return sql`(SELECT json_agg(json_build_array(hp.provider_id, (extract(epoch FROM lower(h.during)) * 1000)::float8,
                  (extract(epoch FROM upper(h.during)) * 1000)::float8) ORDER BY hp.provider_id, lower(h.during))
            FROM ${heldTimeFromSql(env, providers, from, to)})`;
}
