/**
 * Planner statistics and dead rows of the service's own tables, where nothing else looks after them.
 *
 * PostgreSQL's autovacuum daemon analyses a table once enough of it has changed and vacuums it once
 * enough of it is dead (PostgreSQL 15 docs §25.1.6, "The Autovacuum Daemon"). Two deployments have
 * no such daemon:
 * - the embedded PGlite runs PostgreSQL in single-user mode, where the autovacuum launcher never
 *   starts (it reports `autovacuum = on` all the same);
 * - a PostgreSQL server configured with `autovacuum = off`.
 * There, `appointments`, holds, the outbox and the availability summaries keep the statistics of the
 * day they were created: the planner then picks plans for an empty table (measured on the soak:
 * the appointment list took 4.6 ms per call instead of 0.3 ms), and rewritten rows pile up dead.
 *
 * This module applies autovacuum's default thresholds to the tables of the current schema: ANALYZE
 * when `n_mod_since_analyze > 50 + 0.1 × reltuples`, VACUUM and ANALYZE when
 * `n_dead_tup > 50 + 0.2 × reltuples`. It runs only where autovacuum does not (`maintenanceNeeded`),
 * as the table-maintenance job (src/jobs/table-maintenance.ts).
 */
import { sql } from 'kysely';
import type { Db, DatabaseHandle } from './database.js';
import { withLease } from './leases.js';
import { yieldToEventLoop } from '../lib/time-slice.js';

/** autovacuum_analyze_threshold and _scale_factor (PostgreSQL defaults). */
export const ANALYZE_THRESHOLD = 50;
export const ANALYZE_SCALE_FACTOR = 0.1;
/** autovacuum_vacuum_threshold and _scale_factor (PostgreSQL defaults). */
export const VACUUM_THRESHOLD = 50;
export const VACUUM_SCALE_FACTOR = 0.2;

/** What a pass decided for one table. */
export interface TableMaintenance {
  table: string;
  /** The table gets VACUUM, then ANALYZE. */
  vacuum: boolean;
  /** The table gets ANALYZE (true whenever `vacuum` is). */
  analyze: boolean;
}

/**
 * Whether this process should maintain the tables itself: always on PGlite, and on PostgreSQL when
 * the server runs with `autovacuum = off`.
 */
export async function maintenanceNeeded(db: Db, engine: DatabaseHandle['engine']): Promise<boolean> {
  if (engine === 'pglite') return true;
  const { rows } = await sql<{ autovacuum: string }>`SELECT current_setting('autovacuum') AS autovacuum`.execute(db);
  return rows[0]?.autovacuum === 'off';
}

/**
 * The tables of the current schema that are past autovacuum's thresholds, read from
 * `pg_stat_user_tables` (PostgreSQL docs §28.2.18). A table never analysed counts as empty
 * (`reltuples = -1`), so its first 51 changed rows bring its first ANALYZE.
 */
export async function tablesNeedingMaintenance(db: Db): Promise<TableMaintenance[]> {
  const { rows } = await sql<{ table: string; vacuum: boolean; analyze: boolean }>`
    SELECT s.relname AS "table",
           s.n_dead_tup > ${VACUUM_THRESHOLD} + ${VACUUM_SCALE_FACTOR} * greatest(c.reltuples, 0) AS vacuum,
           s.n_mod_since_analyze > ${ANALYZE_THRESHOLD} + ${ANALYZE_SCALE_FACTOR} * greatest(c.reltuples, 0) AS analyze
    FROM pg_stat_user_tables s
    JOIN pg_class c ON c.oid = s.relid
    WHERE s.schemaname = current_schema()
    ORDER BY s.relname`.execute(db);
  return rows.filter((r) => r.vacuum || r.analyze).map((r) => ({ table: r.table, vacuum: r.vacuum, analyze: true }));
}

/** The name of the lease a maintenance pass holds (a row of this schema's `job_leases`, src/db/leases.ts). */
export const MAINTENANCE_LEASE = 'carebook.table_maintenance';

/** How long a maintenance pass's lease holds without a renewal; it is renewed between tables. */
export const MAINTENANCE_LEASE_MS = 300_000;

/**
 * One maintenance pass: VACUUM and ANALYZE, or ANALYZE alone, each table past its threshold, with
 * `SKIP_LOCKED` so that a table under DDL is left for the next pass. Several processes on one
 * database take turns through a lease (src/db/leases.ts); a process that does not get it does
 * nothing. `soleProcess`: the embedded engine, where a lease found held is a dead process's.
 * Returns what it did (empty when nothing was due or another process holds the lease).
 */
export async function maintainTables(db: Db, opts: { soleProcess?: boolean } = {}): Promise<TableMaintenance[]> {
  const leaseOptions = { ttlMs: MAINTENANCE_LEASE_MS, soleProcess: opts.soleProcess };
  const done = await withLease(db, MAINTENANCE_LEASE, leaseOptions, async (lease) => {
    const due = await tablesNeedingMaintenance(db);
    const schema = (await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)).rows[0]!.schema;
    const maintained: TableMaintenance[] = [];
    for (const t of due) {
      if (!(await lease.keep())) break;
      // VACUUM cannot run inside a transaction block; the pass holds none, so each is its own
      // statement. The vacuum and the analysis are two statements, with the event loop given its
      // turn before each: on PGlite each holds the engine the API shares (docs/performance.md, "The
      // summaries' statistics sample"), and two shorter holds delay a request less than their sum.
      if (t.vacuum) {
        await yieldToEventLoop();
        await sql`VACUUM (SKIP_LOCKED) ${sql.id(schema, t.table)}`.execute(db);
      }
      await yieldToEventLoop();
      await sql`ANALYZE (SKIP_LOCKED) ${sql.id(schema, t.table)}`.execute(db);
      maintained.push(t);
    }
    return maintained;
  });
  return done ?? [];
}
