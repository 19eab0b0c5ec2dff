/**
 * Read replicas (docs/decisions/0020-read-replicas.md): the configuration's rules, the lag state, and
 * on PostgreSQL the routing. There the "replica" is a stand-in on the test server: a pool whose
 * sessions are read-only (`default_transaction_read_only`, so any write sent to it fails) and whose
 * search_path puts a schema of views first: the same tables as the test's schema, except that
 * specialty names carry a "Replica " prefix (a read served by the replica shows it; its directory
 * version is another, as an older directory's would be) and appointment
 * holds are empty (a replica that has not received the latest bookings yet). The stand-in reaches
 * the primary's own server, so the lag check finds it caught up. A real streaming replica:
 * test/ops/read-replica.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openReplica, type ReplicaHandle } from '../../src/db/replica.js';
import { replicaFailure } from '../../src/db/replica-reads.js';
import { lsnValue, ReplicaState } from '../../src/db/replica-state.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { replicaCheckIntervalMs } from '../../src/jobs/replica-lag.js';
import { createBody, nyDate, PL, schedulingDirectory } from '../appointments/fixtures.js';
import { newDeveloper, testApp, testPort, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';
import { testDatabaseUrl, type TestDatabase } from '../helpers/db.js';

describe('read replica configuration', () => {
  it('needs a PostgreSQL DATABASE_URL and production, and bounds the lag at 1000 ms by default', () => {
    const replica = 'postgres://reader@replica.internal/carebook';
    expect(() => loadConfig({ APP_ENV: 'production', DATABASE_REPLICA_URL: replica })).toThrow(/DATABASE_REPLICA_URL needs a PostgreSQL DATABASE_URL/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/carebook', DATABASE_REPLICA_URL: replica })).toThrow(/DATABASE_REPLICA_URL serves production reads only/);
    expect(() => loadConfig({ APP_ENV: 'production', DATABASE_URL: 'postgres://db/carebook', DATABASE_REPLICA_URL: 'mysql://x' })).toThrow(
      /DATABASE_REPLICA_URL must start with postgres:\/\//,
    );
    const c = loadConfig({ APP_ENV: 'production', DATABASE_URL: 'postgres://db/carebook', DATABASE_REPLICA_URL: replica });
    expect(c.databaseReplicaUrl).toBe(replica);
    expect(c.databaseReplicaMaxLagMs).toBe(1000);
    expect(loadConfig({}).databaseReplicaUrl).toBeUndefined();
    expect(() => loadConfig({ DATABASE_REPLICA_MAX_LAG_MS: '50' })).toThrow(/DATABASE_REPLICA_MAX_LAG_MS must be an integer from 100 to 600000/);
    expect(replicaCheckIntervalMs(1000)).toBe(250);
    expect(replicaCheckIntervalMs(60_000)).toBe(1000);
  });
});

describe('replica lag by WAL position', () => {
  it('orders WAL positions across the 32-bit boundary', () => {
    expect(lsnValue('0/FFFFFFFF') < lsnValue('1/0')).toBe(true);
    expect(lsnValue('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
  });

  it('is usable while the replica has replayed what the primary had flushed within the bound, and not after', () => {
    let now = 10_000;
    const s = new ReplicaState(1000, () => now);
    expect(s.usable()).toBe(false);
    expect(s.report().condition).toBe('starting');
    // An idle primary: the position does not move, the replica has it, every check catches up.
    s.primarySample(lsnValue('0/100'), now);
    s.replicaReading({ kind: 'standby', replayLsn: lsnValue('0/100') });
    expect(s.usable()).toBe(true);
    now += 5_000;
    s.primarySample(lsnValue('0/100'), now);
    s.replicaReading({ kind: 'standby', replayLsn: lsnValue('0/100') });
    expect(s.report()).toEqual({ condition: 'ok', lagMs: 0 });
    // Writes the replica has not replayed: usable until the bound has passed since the last caught-up sample.
    const caughtUp = now;
    for (let i = 1; i <= 6; i++) {
      now += 250;
      s.primarySample(lsnValue(`0/${(0x100 + i * 0x10).toString(16)}`), now);
      s.replicaReading({ kind: 'standby', replayLsn: lsnValue('0/100') });
      expect(s.usable()).toBe(now - caughtUp <= 1000);
    }
    expect(s.report()).toEqual({ condition: 'lagging', lagMs: 1500 });
    // Replay resumes past some samples: the lag is measured from the latest one it holds.
    s.replicaReading({ kind: 'standby', replayLsn: lsnValue('0/150') });
    expect(s.report()).toEqual({ condition: 'ok', lagMs: 250 });
    // Checks stop coming (a hung check, an unreachable primary): it ages past the bound by itself.
    now += 1000;
    expect(s.usable()).toBe(false);
    s.unreachable();
    expect(s.report()).toEqual({ condition: 'unreachable', lagMs: undefined });
    s.replicaReading({ kind: 'not a standby' });
    expect(s.usable()).toBe(false);
    expect(s.report().condition).toBe('not a standby');
  });

  it('sends a statement to the primary when the replica is down or cancelled it for recovery, and fails a statement the primary would refuse too', () => {
    expect(replicaFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toBe('down');
    expect(replicaFailure(new Error('Connection terminated unexpectedly'))).toBe('down');
    expect(replicaFailure(Object.assign(new Error('the database system is starting up'), { code: '57P03' }))).toBe('down');
    expect(replicaFailure(Object.assign(new Error('canceling statement due to conflict with recovery'), { code: '40001' }))).toBe('retry');
    expect(replicaFailure(Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' }))).toBe('fail');
    expect(replicaFailure(Object.assign(new Error('invalid input syntax'), { code: '22P02' }))).toBe('fail');
  });
});

/**
 * The stand-in replica of `primary` (see the module comment): a schema of views over its tables,
 * first on a read-only session's search_path.
 */
async function standInReplica(primary: TestDatabase, url: string): Promise<ReplicaHandle & { views: string }> {
  const views = `r_${randomBytes(6).toString('hex')}`;
  const schema = primary.schema!;
  const tables = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema} AND table_type = 'BASE TABLE'`.execute(primary.db);
  await sql`CREATE SCHEMA ${sql.id(views)}`.execute(primary.db);
  for (const { table_name: t } of tables.rows) {
    let body = sql`SELECT * FROM ${sql.id(schema, t)}`;
    if (t === 'appointment_holds') body = sql`SELECT * FROM ${sql.id(schema, t)} WHERE false`;
    // Its specialties differ from the primary's, so its directory is an older one: its directory
    // version is another too (what is kept by version must never pass for the primary's).
    const changed: Record<string, Record<string, ReturnType<typeof sql>>> = {
      specialties: { name: sql`'Replica ' || name AS name` },
      directory_version: { version: sql`version - 1000000 AS version` },
    };
    if (changed[t]) {
      const cols = await sql<{ column_name: string }>`
        SELECT column_name FROM information_schema.columns WHERE table_schema = ${schema} AND table_name = ${t} ORDER BY ordinal_position`.execute(primary.db);
      const list = cols.rows.map((c) => changed[t]![c.column_name] ?? sql.id(c.column_name));
      body = sql`SELECT ${sql.join(list)} FROM ${sql.id(schema, t)}`;
    }
    await sql`CREATE VIEW ${sql.id(views, t)} AS ${body}`.execute(primary.db);
  }
  const replica = await openReplica(primary, {
    url,
    maxLagMs: 1000,
    options: `-c default_transaction_read_only=on -c search_path=${views},${schema},public`,
  });
  return { ...replica, views };
}

/** Reads the test's routes make, each answered 200 (a write in any of them would fail on the read-only replica). */
const READS = [
  '/v1/specialties',
  '/v1/specialties/sp_t',
  '/v1/visit_reasons',
  '/v1/visit_reasons/pc_t30',
  '/v1/insurance_plans',
  '/v1/insurance_plans/ip_t',
  '/v1/reference/npi',
  '/v1/providers?npis=1234567893',
  '/v1/provider_locations?zip_code=10001&specialty_id=sp_t',
  `/v1/provider_locations/${encodeURIComponent(PL.ny)}`,
  `/v1/provider_locations/${encodeURIComponent(PL.ny)}/insurance_mappings`,
  '/v1/schedulable_entities',
  '/v1-beta/facilities?zip_code=10001',
  `/v1/provider_locations/availability?provider_location_ids=${encodeURIComponent(PL.ny)}&visit_reason_id=pc_t30&patient_type=new`,
];

describe.runIf(testDatabaseUrl)('directory and availability reads on a replica (PostgreSQL; a read-only stand-in replica)', () => {
  let t: TestApp;
  let replica: ReplicaHandle & { views: string };
  let token: string;

  beforeAll(async () => {
    t = await testApp(
      { APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.org' },
      {
        replica: async (h) => {
          replica = await standInReplica(h, testDatabaseUrl!);
          return { reads: replica.reads, state: replica.state, close: async () => {
            await replica.close();
            await sql`DROP SCHEMA ${sql.id(replica.views)} CASCADE`.execute(h.db);
          } };
        },
      },
    );
    const dev = await newDeveloper(t);
    await t.db.transaction().execute((trx) => writeDirectory(trx, 'production', schedulingDirectory(), { developerId: dev.developer_id }));
    token = await clientToken(t, dev);
    await replica.check();
  });
  afterAll(() => t?.close());

  const get = (url: string) => t.app.inject({ url, headers: bearer(token) });
  const slotsOf = async (date: string): Promise<string[]> => {
    const q = new URLSearchParams({ provider_location_ids: PL.ny, visit_reason_id: 'pc_t30', patient_type: 'new', start_date_in_provider_local_time: date, end_date_in_provider_local_time: date });
    const res = await get(`/v1/provider_locations/availability?${q}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { data: { timeslots: { start_time: string }[] }[] }).data[0]!.timeslots.map((s) => s.start_time);
  };

  it('the lag check finds the stand-in caught up; /readyz and /metrics say so', async () => {
    expect(replica.state.usable()).toBe(true);
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ok', database: 'ok', replica: 'ok' });
    const metrics = await t.app.inject({ url: '/metrics' });
    expect(metrics.body).toMatch(/^carebook_replica_usable 1$/m);
  });

  it('directory reads are answered from the replica', async () => {
    const list = await get('/v1/specialties');
    expect(list.statusCode, list.body).toBe(200);
    expect((list.json() as { data: { name: string }[] }).data.map((s) => s.name)).toEqual(['Replica Test']);
    const one = await get('/v1/specialties/sp_t');
    expect((one.json() as { data: { name: string } }).data.name).toBe('Replica Test');
  });

  it('every directory and availability read runs on the read-only replica without a write', async () => {
    for (const url of READS) {
      const res = await get(url);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    }
    // The replica refuses a write: were one routed to it, the route would fail, not write on the primary.
    // (insurance_carriers is a plain view there: an insert would pass through to the table.)
    await expect(replica.reads.insertInto('insurance_carriers').values({ env: 'production', id: 'ic_x', name: 'x' } as never).execute()).rejects.toThrow(
      /cannot execute INSERT in a read-only transaction/,
    );
  });

  it('a booking goes to the primary: a slot the replica still offers is refused there, and without the replica the slot is gone', async () => {
    const date = nyDate(4);
    const [start] = await slotsOf(date);
    expect(start).toBeDefined();
    const first = await t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(token), payload: createBody(PL.ny, start!, {}, { developer_patient_id: 'rr-1' }) });
    expect(first.statusCode, first.body).toBe(200);
    // The stand-in has not "received" the booking: it still offers the slot.
    expect(await slotsOf(date)).toContain(start);
    const second = await t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(token), payload: createBody(PL.ny, start!, {}, { developer_patient_id: 'rr-2' }) });
    expect(second.statusCode, second.body).toBe(409);
    // Past the bound (here: marked unreachable), reads go to the primary, which has the booking.
    replica.state.unreachable();
    expect(await slotsOf(date)).not.toContain(start);
    const names = await get('/v1/specialties');
    expect((names.json() as { data: { name: string }[] }).data.map((s) => s.name)).toEqual(['Test']);
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ok', replica: 'unreachable' });
    await replica.check();
    expect(await slotsOf(date)).toContain(start);
  });
});

describe.runIf(testDatabaseUrl)('a replica that fails (PostgreSQL): reads fall back to the primary, never a 500', () => {
  let t: TestApp;
  let state: ReplicaState;
  let token: string;

  beforeAll(async () => {
    // Nothing listens on this port: every replica connection is refused.
    const url = new URL(testDatabaseUrl!);
    url.port = String(testPort());
    t = await testApp(
      { APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.org' },
      {
        replica: async (h) => {
          const r = await openReplica(h, { url: url.toString(), maxLagMs: 1000 });
          state = r.state;
          return r;
        },
      },
    );
    const dev = await newDeveloper(t);
    await t.db.transaction().execute((trx) => writeDirectory(trx, 'production', schedulingDirectory(), { developerId: dev.developer_id }));
    token = await clientToken(t, dev);
  });
  afterAll(() => t?.close());

  it('the replica counted usable but refusing connections: each read is answered from the primary and the replica is marked unreachable', async () => {
    // As if the last check had found it caught up just before it went down.
    state.primarySample(0n, Date.now());
    state.replicaReading({ kind: 'same server' });
    expect(state.usable()).toBe(true);
    const res = await t.app.inject({ url: '/v1/specialties', headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as { data: { name: string }[] }).data.map((s) => s.name)).toEqual(['Test']);
    expect(state.report().condition).toBe('unreachable');
    for (const u of READS) {
      const r = await t.app.inject({ url: u, headers: bearer(token) });
      expect(r.statusCode, `${u}: ${r.body}`).toBe(200);
    }
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ok', database: 'ok', replica: 'unreachable' });
  });
});
