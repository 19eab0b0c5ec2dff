import { Writable } from 'node:stream';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { takeLease } from '../../src/db/leases.js';
import { MAINTENANCE_LEASE, maintainTables, maintenanceNeeded, tablesNeedingMaintenance, type TableMaintenance } from '../../src/db/table-maintenance.js';
import { startLoop } from '../../src/jobs/loop.js';
import { tableMaintenanceJob } from '../../src/jobs/table-maintenance.js';
import { engineName, freshDatabase } from '../helpers/db.js';
import { scaled } from '../helpers/scale.js';

/**
 * Planner statistics and dead rows where no autovacuum runs (src/db/table-maintenance.ts), on the
 * engine under test. `probe` is a table of the test's own; the service's tables are left to the
 * other suites.
 */
describe(`table maintenance (${engineName})`, () => {
  let h: DatabaseHandle;
  beforeAll(async () => {
    h = await freshDatabase();
    await sql`CREATE TABLE probe (id int PRIMARY KEY, v text NOT NULL)`.execute(h.db);
  });
  afterAll(async () => {
    await h.close();
  });

  /** Runs `statement` and makes its connection publish its table statistics at once (PostgreSQL batches them up to 10 s). */
  const changeAndFlush = (statement: ReturnType<typeof sql>) =>
    h.db.connection().execute(async (conn) => {
      await statement.execute(conn);
      await sql`SELECT pg_stat_force_next_flush()`.execute(conn);
    });
  const pgClass = async () =>
    (await sql<{ reltuples: number }>`SELECT reltuples FROM pg_class WHERE oid = 'probe'::regclass`.execute(h.db)).rows[0]!.reltuples;
  const counts = async () =>
    (
      await sql<{ analyze_count: string; vacuum_count: string }>`
        SELECT analyze_count, vacuum_count FROM pg_stat_user_tables WHERE relid = 'probe'::regclass`.execute(h.db)
    ).rows[0]!;
  /** The statistics reach the shared view a moment after the flush; wait for a predicate on them. */
  const until = async <T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> => {
    const deadline = Date.now() + scaled(15_000);
    for (;;) {
      const v = await read();
      if (ok(v) || Date.now() > deadline) return v;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const probeOf = (due: TableMaintenance[]) => due.find((t) => t.table === 'probe');

  it('runs where autovacuum does not: always on PGlite, on PostgreSQL when the server has autovacuum = off', async () => {
    if (h.engine === 'pglite') {
      expect(await maintenanceNeeded(h.db, 'pglite')).toBe(true);
    } else {
      const setting = (await sql<{ v: string }>`SELECT current_setting('autovacuum') AS v`.execute(h.db)).rows[0]!.v;
      expect(await maintenanceNeeded(h.db, 'postgres')).toBe(setting === 'off');
    }
  });

  it('analyses a table once more rows changed than autovacuum would allow, and vacuums it once enough are dead', async () => {
    // 1,000 new rows in a never-analysed table (reltuples -1 counts as 0): past 50 + 10 %.
    await changeAndFlush(sql`INSERT INTO probe SELECT g, 'x' FROM generate_series(1, 1000) g`);
    const due = await until(() => tablesNeedingMaintenance(h.db), (d) => !!probeOf(d));
    expect(probeOf(due)).toEqual({ table: 'probe', analyze: true, vacuum: false });
    expect(await pgClass()).toBeLessThanOrEqual(0);

    const done = await maintainTables(h.db);
    expect(probeOf(done)).toEqual({ table: 'probe', analyze: true, vacuum: false });
    // The planner now knows the table's size.
    expect(await pgClass()).toBe(1000);
    expect(Number((await counts()).analyze_count)).toBe(1);
    expect(probeOf(await tablesNeedingMaintenance(h.db))).toBeUndefined();

    // 30 changed rows stay under the threshold (50 + 0.1 × 1000 = 150): nothing to do.
    await changeAndFlush(sql`UPDATE probe SET v = 'y' WHERE id <= 30`);
    await new Promise((r) => setTimeout(r, 300));
    expect(probeOf(await tablesNeedingMaintenance(h.db))).toBeUndefined();

    // 600 deleted rows: past the vacuum threshold (50 + 0.2 × 1000 = 250).
    await changeAndFlush(sql`DELETE FROM probe WHERE id > 400`);
    const dead = await until(() => tablesNeedingMaintenance(h.db), (d) => !!probeOf(d)?.vacuum);
    expect(probeOf(dead)).toEqual({ table: 'probe', analyze: true, vacuum: true });
    expect(probeOf(await maintainTables(h.db))).toEqual({ table: 'probe', analyze: true, vacuum: true });
    expect(await pgClass()).toBe(400);
    expect(Number((await counts()).vacuum_count)).toBe(1);
    // Whether the dead rows are gone afterwards is not asserted: VACUUM may not remove rows that an
    // open transaction anywhere on the server can still see (other suites run beside this one), and
    // then the next pass vacuums again, as autovacuum would.
  });

  it('does nothing while another process holds the pass lease; on the embedded engine (one process) it takes the lease over', async () => {
    await changeAndFlush(sql`INSERT INTO probe SELECT g, 'z' FROM generate_series(5001, 6000) g`);
    await until(() => tablesNeedingMaintenance(h.db), (d) => !!probeOf(d));
    const before = Number((await counts()).analyze_count);
    // Another process's pass: the lease, under another holder, for a minute.
    expect(await takeLease(h.db, MAINTENANCE_LEASE, 'another-process', { ttlMs: 60_000 })).toBe(true);
    expect(await maintainTables(h.db)).toEqual([]);
    expect(Number((await counts()).analyze_count)).toBe(before);
    // A process that alone can open the database takes over a lease a dead one left, and gives it up after.
    expect(probeOf(await maintainTables(h.db, { soleProcess: true }))?.analyze).toBe(true);
    expect(Number((await counts()).analyze_count)).toBe(before + 1);
    expect(await h.db.selectFrom('job_leases').selectAll().execute()).toEqual([]);
  });

  it('the job runs passes on its interval, logs what it did, and stops cleanly', async () => {
    await changeAndFlush(sql`INSERT INTO probe SELECT g, 'w' FROM generate_series(7001, 9000) g`);
    await until(() => tablesNeedingMaintenance(h.db), (d) => !!probeOf(d));
    const logged: { level: number; msg: string; tables?: string[] }[] = [];
    const sink = new Writable({ write(chunk, _enc, cb) { logged.push(JSON.parse(String(chunk))); cb(); } });
    // The job asks the server whether it is needed; say "pglite" so it runs on either engine.
    const job = tableMaintenanceJob({ db: h.db, config: loadConfig({ LOG_LEVEL: 'silent' }), engine: 'pglite' });
    const loop = startLoop({ ...job, intervalMs: 50, firstPassAfterMs: 50 }, pino({ level: 'debug' }, sink));
    await until(async () => loop.stats().passes, (n) => n >= 2);
    await loop.stop();
    const n = loop.stats().passes;
    await new Promise((r) => setTimeout(r, 200));
    expect(loop.stats().passes).toBe(n);
    expect(loop.stats().failures).toBe(0);
    expect(logged.filter((l) => l.level >= 50)).toEqual([]);
    // The first pass analysed the probe (by ANALYZE, or by VACUUM (ANALYZE) when the dead rows of
    // the earlier tests' changes have reached the statistics by then, as on a busy PostgreSQL), and said so.
    expect(logged[0]).toMatchObject({ msg: 'table maintenance' });
    expect(logged[0]!.tables!.filter((t) => t === 'analyze probe' || t === 'vacuum probe')).toHaveLength(1);
    expect(await pgClass()).toBe(3400);
  });
});
