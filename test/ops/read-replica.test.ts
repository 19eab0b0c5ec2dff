/**
 * Read replicas on a real streaming replica (issue #20 §8; docs/decisions/0020-read-replicas.md): a
 * private primary and its `pg_basebackup -R` hot standby on this machine (test/ops/replica-pair.ts),
 * two production API processes with `DATABASE_REPLICA_URL`. Directory and availability reads are
 * served by the standby; bookings racing for one slot across both processes have one winner; with
 * replay paused past the lag bound, and with the standby stopped, reads are answered by the primary
 * (never a 500) and `/readyz` stays 200 while it names the replica's state.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBody, nyDate, PL } from '../appointments/fixtures.js';
import { testPort } from '../helpers/app.js';
import { freeSlots, http, onboard, sleep, startCarebook, type Proc, type Tenant } from './cluster.js';
import { canRunReplicaPair, startReplicaPair, type ReplicaPair } from './replica-pair.js';

const ADMIN = `ops-admin-${randomBytes(16).toString('hex')}`;

/**
 * Scans, as counted by one server, of the tables every read of the test touches: `visit_reasons`
 * (the visit reasons listing) and `directory_version` (availability, whose statement reads the
 * versions even when its schedule data is kept: docs/scheduling.md, "Kept schedule data").
 */
const SCANS = `SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0)::int AS n FROM pg_stat_user_tables WHERE relname IN ('visit_reasons', 'directory_version')`;

describe.runIf(canRunReplicaPair)('read replicas: a real streaming replica beside a private primary (needs PostgreSQL server binaries in /usr/lib/postgresql/*/bin)', () => {
  let pair: ReplicaPair;
  let dataDir: string;
  const procs: Proc[] = [];
  let tenant: Tenant;
  const auth = () => ({ authorization: `Bearer ${tenant.token}` });

  const readyz = async (p: Proc) => (await http('GET', `${p.url}/readyz`)).json<{ status: string; replica?: string; replica_lag_ms?: number }>();
  /** Waits until every API process reports the replica in `state`. */
  const replicaIs = async (state: string, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const seen = await Promise.all(procs.map(readyz));
      if (seen.every((r) => r.replica === state)) return;
      if (Date.now() > deadline) throw new Error(`replica not ${state}: ${JSON.stringify(seen)}`);
      await sleep(100);
    }
  };
  /**
   * Waits until `p` has logged a line matching `pattern`: /readyz reports a state as soon as the lag
   * check stores it, and the check's log line reaches this process through a pipe a moment later.
   */
  const logged = async (p: Proc, pattern: RegExp, timeoutMs = 5_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(p.output()) && Date.now() < deadline) await sleep(50);
    expect(p.output()).toMatch(pattern);
  };
  const scans = async (on: 'replica' | 'primary') => (await (on === 'replica' ? pair.onReplica<{ n: number }>(SCANS) : pair.onPrimary<{ n: number }>(SCANS)))[0]!.n;
  const availability = (p: Proc, date: string) =>
    http(
      'GET',
      `${p.url}/v1/provider_locations/availability?${new URLSearchParams({ provider_location_ids: PL.ny, visit_reason_id: 'pc_t30', patient_type: 'new', start_date_in_provider_local_time: date, end_date_in_provider_local_time: date })}`,
      undefined,
      auth(),
    );
  const offered = async (p: Proc, date: string): Promise<string[]> => {
    const res = await availability(p, date);
    expect(res.status, res.body).toBe(200);
    return res.json<{ data: { timeslots: { start_time: string }[] }[] }>().data[0]!.timeslots.map((s) => s.start_time);
  };

  beforeAll(async () => {
    pair = await startReplicaPair(testPort(), testPort());
    dataDir = await mkdtemp(join(tmpdir(), 'carebook-replica-data-'));
    const [port1, port2] = [testPort(), testPort()];
    const env = {
      APP_ENV: 'production',
      ADMIN_TOKEN: ADMIN,
      KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      DATABASE_URL: pair.primaryUrl,
      DATABASE_REPLICA_URL: pair.replicaUrl,
      DATABASE_REPLICA_MAX_LAG_MS: '1000',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port1}`,
      DATA_DIR: dataDir,
    };
    procs.push(await startCarebook(['serve'], env, { port: port1, timeoutMs: 120_000 }));
    procs.push(await startCarebook(['serve', '--no-workers'], env, { port: port2, timeoutMs: 120_000 }));
    tenant = await onboard(procs[0]!.url, `${env.PUBLIC_BASE_URL}/`, undefined, undefined, ADMIN);
    await replicaIs('ok');
  }, 240_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await pair?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 120_000);

  it('directory and availability reads of both API processes are served by the standby', async () => {
    const before = await scans('replica');
    const n = 40;
    for (let i = 0; i < n; i++) {
      const p = procs[i % 2]!;
      const res = await (i % 4 < 2 ? availability(p, nyDate(2)) : http('GET', `${p.url}/v1/visit_reasons`, undefined, auth()));
      expect(res.status, res.body).toBe(200);
    }
    // Both processes hold connections on the standby, under the reads pool's application_name.
    const conns = await pair.onReplica<{ n: number }>(`SELECT count(DISTINCT client_port)::int AS n FROM pg_stat_activity WHERE application_name = 'carebook-reads'`);
    expect(conns[0]!.n).toBeGreaterThanOrEqual(2);
    // The standby counted the scans (statistics reach its views within seconds of a session going idle).
    const deadline = Date.now() + 30_000;
    let after = before;
    while ((after = await scans('replica')) < before + n && Date.now() < deadline) await sleep(500);
    expect(after - before).toBeGreaterThanOrEqual(n);
  });

  it('bookings racing for one slot through both processes: exactly one winner, and the standby soon stops offering the slot', async () => {
    const date = nyDate(3);
    const [start] = await freeSlots(procs[0]!.url, tenant.token, PL.ny, date);
    expect(start).toBeDefined();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => http('POST', `${procs[i % 2]!.url}/v1/appointments`, createBody(PL.ny, start!, {}, { developer_patient_id: `race-${i}` }), auth())),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(results.filter((r) => r.status < 300).length, statuses.join(',')).toBe(1);
    expect(results.filter((r) => r.status === 409).length, results.map((r) => r.body).join('\n')).toBe(7);
    const rows = await pair.onPrimary<{ n: number }>(`SELECT count(*)::int AS n FROM appointments WHERE developer_patient_id LIKE 'race-%'`);
    expect(rows[0]!.n).toBe(1);
    // Replicated within the bound: neither process offers the slot any more.
    const deadline = Date.now() + 10_000;
    for (const p of procs) {
      while ((await offered(p, date)).includes(start!) && Date.now() < deadline) await sleep(100);
      expect(await offered(p, date)).not.toContain(start);
    }
  });

  it('with replay paused past the bound, reads go to the primary, which has the latest booking', async () => {
    const date = nyDate(5);
    const free = await offered(procs[0]!, date);
    const target = free[3]!;
    await pair.onReplica('SELECT pg_wal_replay_pause()');
    try {
      const booked = await http('POST', `${procs[0]!.url}/v1/appointments`, createBody(PL.ny, target, {}, { developer_patient_id: 'paused-1' }), auth());
      expect(booked.status, booked.body).toBeLessThan(300);
      const id = booked.json<{ data: { appointment_id: string } }>().data.appointment_id;
      await replicaIs('lagging');
      // The standby has not replayed the booking; the answers come from the primary, which has.
      expect(await pair.onReplica<{ n: number }>(`SELECT count(*)::int AS n FROM appointments WHERE id = '${id}'`)).toEqual([{ n: 0 }]);
      for (const p of procs) expect(await offered(p, date)).not.toContain(target);
      const ready = await readyz(procs[1]!);
      expect(ready.status).toBe('ok');
      expect(ready.replica_lag_ms).toBeGreaterThan(1000);
      // Each process said so in its log (LOG_LEVEL=warn here).
      for (const p of procs) await logged(p, /"replica":"lagging".*read replica not in use/);
    } finally {
      await pair.onReplica('SELECT pg_wal_replay_resume()');
    }
    await replicaIs('ok');
  });

  it('with the standby stopped, every read is answered by the primary and /readyz stays 200; it is used again once back', async () => {
    let stop = false;
    const seen: number[] = [];
    // Reads keep coming while the standby shuts down (in-flight statements are cut off) and after.
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        const p = procs[i % 2]!;
        const res = await (i % 2 ? availability(p, nyDate(2)) : http('GET', `${p.url}/v1/specialties`, undefined, auth()));
        seen.push(res.status);
      }
    })();
    await sleep(300);
    await pair.stopReplica();
    await replicaIs('unreachable');
    await sleep(500);
    stop = true;
    await load;
    expect(seen.length).toBeGreaterThan(10);
    expect(seen.filter((s) => s !== 200)).toEqual([]);
    for (const p of procs) {
      const ready = await http('GET', `${p.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(ready.json()).toMatchObject({ status: 'ok', database: 'ok', replica: 'unreachable' });
      await logged(p, /"replica":"unreachable".*read replica not in use/);
      expect(p.output()).not.toMatch(/"level":50/);
    }
    await pair.startReplica();
    await replicaIs('ok', 30_000);
    const before = await scans('replica');
    for (let i = 0; i < 10; i++) expect((await availability(procs[i % 2]!, nyDate(2))).status).toBe(200);
    const deadline = Date.now() + 30_000;
    while ((await scans('replica')) < before + 10 && Date.now() < deadline) await sleep(500);
    expect(await scans('replica')).toBeGreaterThanOrEqual(before + 10);
  });
});
