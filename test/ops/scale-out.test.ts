/**
 * Scale-out on PostgreSQL (issue #6 §1, docs/api/deployment.md#scale-out): two API processes and two
 * worker sets (a `carebook worker` process and an API started with its workers) as real child
 * processes on one database. Bookings race across processes: no double booking; operator moves'
 * webhook events are each delivered exactly once.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { createBody, nyDate, PL } from '../appointments/fixtures.js';
import { testPort } from '../helpers/app.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { ADMIN_TOKEN, freeSlots, freshPgDatabase, http, onboard, sleep, startCarebook, type Proc, type Tenant } from './cluster.js';

const baseUrl = process.env.TEST_DATABASE_URL;

describe.runIf(baseUrl)('scale-out: two API processes and two worker sets on one PostgreSQL (needs TEST_DATABASE_URL; the embedded database admits one process)', () => {
  let db: { url: string; drop(): Promise<void> };
  const procs: Proc[] = [];
  let api1: Proc;
  let api2: Proc;
  let handle: DatabaseHandle;
  let rx: Receiver;
  let tenant: Tenant;
  const key = randomBytes(32).toString('base64');

  beforeAll(async () => {
    db = await freshPgDatabase(baseUrl!, 'carebook_scale');
    rx = await startReceiver([key]);
    const port1 = testPort();
    const port2 = testPort();
    // Behind a load balancer every process has the same public address (token audience and issuer).
    const env = { DATABASE_URL: db.url, PUBLIC_BASE_URL: `http://127.0.0.1:${port1}`, DATA_DIR: `/tmp/carebook-scale-${randomBytes(4).toString('hex')}` };
    // The first process migrates and bootstraps the database; the others start on a migrated one.
    api1 = await startCarebook(['serve'], env, { port: port1 });
    procs.push(api1);
    [api2] = await Promise.all([
      startCarebook(['serve', '--no-workers'], env, { port: port2 }),
      startCarebook(['worker'], { ...env, LOG_LEVEL: 'info' }).then((w) => (procs.push(w), w)),
    ]);
    procs.push(api2);
    tenant = await onboard(api1.url, `${env.PUBLIC_BASE_URL}/`, rx.url, key);
    handle = await openDatabase({ databaseUrl: db.url, poolSize: 2 });
  }, 180_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await handle?.close();
    await rx?.close();
    await db?.drop();
  }, 60_000);

  it('bookings racing across processes: each slot has exactly one winner, the losers get 409, the database holds no overlap', async () => {
    const date = nyDate(3);
    const starts = (await freeSlots(api1.url, tenant.token, PL.ny, date)).slice(0, 12);
    expect(starts.length).toBe(12);
    const auth = { authorization: `Bearer ${tenant.token}` };
    // Three or four contenders per slot, through both API processes, all in flight at once: 30-minute
    // visits, plus a 60-minute visit (which also covers the next slot) where one is offered.
    const sixty = new Set(await freeSlots(api1.url, tenant.token, PL.ny, date, 'pc_t60'));
    const attempts = starts.flatMap((start, i) =>
      (sixty.has(start) ? [0, 1, 2, 3] : [0, 1, 2]).map((n) => ({
        slot: i,
        api: n % 2 === 0 ? api1 : api2,
        body: createBody(PL.ny, start, n === 3 ? { visit_reason_id: 'pc_t60' } : {}, { developer_patient_id: `race-${i}-${n}` }),
      })),
    );
    const results = await Promise.all(attempts.map(async (a) => ({ ...a, res: await http('POST', `${a.api.url}/v1/appointments`, a.body, auth) })));
    const bad = results.filter((r) => ![200, 201, 409].includes(r.res.status));
    expect(bad.map((r) => `${r.res.status} ${r.res.body}`)).toEqual([]);
    for (const r of results.filter((x) => x.res.status === 409)) {
      expect(r.res.json().request_id).toBe(r.res.headers['x-request-id']);
    }
    const winners = results.filter((r) => r.res.status < 300);
    // The conflicts crossed processes: for every slot, a contender on the other API process lost.
    for (const w of winners) {
      expect(results.some((r) => r.slot === w.slot && r.api !== w.api && r.res.status === 409), `slot ${w.slot}`).toBe(true);
    }

    const live = await handle.db
      .selectFrom('appointments')
      .select(['id', 'start_time', 'end_time'])
      .where('developer_id', '=', tenant.developerId)
      .where('provider_id', '=', 'pr_ny')
      .where('appointment_status', 'not in', ['cancelled', 'booking_failed'])
      .orderBy('start_time')
      .execute();
    expect(live.map((a) => a.id).sort()).toEqual(winners.map((w) => w.res.json().data.appointment_id as string).sort());
    for (let i = 1; i < live.length; i++) expect(live[i]!.start_time.getTime()).toBeGreaterThanOrEqual(live[i - 1]!.end_time.getTime());
    // Every slot was won by exactly one booking, or lost to the 60-minute visit of the slot before.
    for (let i = 0; i < starts.length; i++) {
      const slotStart = new Date(starts[i]!).getTime();
      const covering = live.filter((a) => a.start_time.getTime() <= slotStart && a.end_time.getTime() > slotStart);
      expect(covering, `slot ${starts[i]}`).toHaveLength(1);
      expect(winners.filter((w) => w.slot === i).length).toBeLessThanOrEqual(1);
    }
    const overlaps = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM appointment_holds a JOIN appointment_holds b
        ON a.env = b.env AND a.provider_id = b.provider_id AND a.appointment_id < b.appointment_id AND a.during && b.during`.execute(handle.db);
    expect(overlaps.rows[0]!.n).toBe(0);
  }, 120_000);

  it("operator moves' webhook events are each delivered exactly once with two worker sets running", async () => {
    const date = nyDate(4);
    const starts = (await freeSlots(api2.url, tenant.token, PL.manual, date)).slice(0, 16);
    const auth = { authorization: `Bearer ${tenant.token}` };
    const ids: string[] = [];
    for (const [i, start] of starts.entries()) {
      const res = await http('POST', `${(i % 2 ? api2 : api1).url}/v1/appointments`, createBody(PL.manual, start, {}, { developer_patient_id: `hook-${i}` }), auth);
      expect(res.status, res.body).toBeLessThan(300);
      ids.push(res.json().data.appointment_id);
    }
    // Operator moves through both API processes at once: each writes one outbox event.
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const moved = await Promise.all(ids.map((id, i) => http('POST', `${(i % 2 ? api1 : api2).url}/admin/v1/appointments/${id}/transition`, { to: 'confirmed' }, admin)));
    expect(moved.map((m) => m.status)).toEqual(ids.map(() => 200));

    const events = () =>
      handle.db.selectFrom('outbox_events').select(['id', 'status']).where('developer_id', '=', tenant.developerId).where('appointment_id', 'in', ids).where('status', '!=', 'skipped').execute();
    const deadline = Date.now() + 30_000;
    while ((await events()).some((e) => e.status !== 'delivered')) {
      if (Date.now() > deadline) throw new Error(`not delivered: ${JSON.stringify(await events())}`);
      await sleep(100);
    }
    await sleep(1000); // time for a duplicate to show up, if there were one
    const all = await events();
    expect(all).toHaveLength(ids.length);
    const received = rx.received.map((r) => String(r.headers['webhook-id']));
    for (const e of all) expect(received.filter((id) => id === e.id), e.id).toHaveLength(1);
    const deliveries = await handle.db.selectFrom('webhook_deliveries').select(['event_id']).where('event_id', 'in', all.map((e) => e.id)).execute();
    expect(deliveries).toHaveLength(all.length);
    expect(rx.received.every((r) => r.verifiedWith.length === 1)).toBe(true);
  }, 120_000);
});
