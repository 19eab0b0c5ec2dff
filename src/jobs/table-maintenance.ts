/**
 * The table-maintenance job: where no autovacuum runs (PGlite; PostgreSQL with `autovacuum = off`,
 * asked once, at the first pass), each pass ANALYZEs or VACUUMs the tables past autovacuum's
 * thresholds (`maintainTables`, src/db/table-maintenance.ts), every 15 s, the first pass 15 s after
 * the start. Elsewhere the first pass retires the job. The tables maintained are logged at debug level.
 */
import { maintainTables, maintenanceNeeded } from '../db/table-maintenance.js';
import type { JobDeps } from './job-deps.js';
import type { Job } from './loop.js';

/** Pause (ms) between passes (autovacuum's own naptime is 60 s; the service's tables change faster than a default server's). */
export const MAINTENANCE_INTERVAL_MS = 15_000;

/** The table-maintenance job of the database `deps.db`. */
export function tableMaintenanceJob({ db, engine }: JobDeps): Job {
  let needed: boolean | undefined;
  return {
    name: 'table-maintenance',
    title: 'table maintenance',
    intervalMs: MAINTENANCE_INTERVAL_MS,
    firstPassAfterMs: MAINTENANCE_INTERVAL_MS,
    async pass(ctx) {
      needed ??= await maintenanceNeeded(db, engine);
      if (!needed) {
        ctx.retire();
        return 0;
      }
      const done = await maintainTables(db, { soleProcess: engine === 'pglite' });
      if (done.length) ctx.logger.debug({ tables: done.map((t) => `${t.vacuum ? 'vacuum' : 'analyze'} ${t.table}`) }, 'table maintenance');
      return done.length;
    },
  };
}
