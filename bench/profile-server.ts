/**
 * The profiled side of bench/profile.ts: the service of one source tree (`PROFILE_SRC`, a `src`
 * directory: ours or an older commit's extracted into a temporary directory), started as `carebook
 * serve` starts it (`startService`: its background jobs, its logger at the default `info` level
 * writing to stdout, which the parent drains), on an in-memory PGlite or, with `DATABASE_URL` and
 * `PROFILE_SCHEMA`, a scratch schema on PostgreSQL. It seeds a developer and a small generated
 * directory, tells the parent (IPC) where it listens and which slots are free, and then, on the
 * parent's word, runs V8's sampling profiler on itself (`node:inspector`, so setup is not in the
 * profile) until the parent's load is over and the process has gone quiet.
 *
 * Messages: parent → child `start` | `stop` | `exit`; child → parent `ready` (Ready) | `started` |
 * `stopped` (Stopped).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { DateTime } from 'luxon';
import { sql } from 'kysely';
import { bookableRows } from './bookable.js';
import { mainThreadCpuUs } from './cpu-meter.js';

export interface Ready {
  type: 'ready';
  url: string;
  clientId: string;
  clientSecret: string;
  audience: string;
  /** Provider-locations (one per provider) that take a self-pay patient. */
  providerLocations: number;
  /** Free slots, one per (provider-location, day), day by day, so consecutive ones differ. */
  slots: Slot[];
}
/** A free slot of a provider-location for a visit reason (its provider's first). */
export interface Slot {
  pl: string;
  start: string;
  reason: string;
}
export interface Stopped {
  type: 'stopped';
  profileFile: string;
  /**
   * The main thread's CPU time (user + system) from `start` to the end of the quiet wait: JavaScript,
   * the embedded engine and system calls, without the profiler's sampling thread or GC helper threads.
   */
  cpuUs: number;
  wallMs: number;
  /** How long the process took to go quiet after the load ended. */
  settleMs: number;
  /** Appointments still due for the evaluator when the profile stopped (0: it had evaluated every booking). */
  dueLeft: number;
}

type Imports = {
  config: typeof import('../src/config.js');
  database: typeof import('../src/db/database.js');
  server: typeof import('../src/server.js');
  developers: typeof import('../src/domain/developers/create-developer.js');
  seed: typeof import('../src/domain/directory/seed.js');
  write: typeof import('../src/domain/directory/write/write-directory.js');
  slots: typeof import('../src/domain/availability/slot-lists.js');
};

const SRC = process.env.PROFILE_SRC!;
const send = (m: object) => process.send!(m);

async function load(): Promise<Imports> {
  const at = (p: string) => import(join(SRC, p));
  return {
    config: await at('config.ts'),
    database: await at('db/database.ts'),
    server: await at('server.ts'),
    developers: await at('domain/developers/create-developer.ts'),
    seed: await at('domain/directory/seed.ts'),
    write: await at('domain/directory/write/write-directory.ts'),
    slots: await at('domain/availability/slot-lists.ts'),
  };
}

/**
 * Waits until the main thread uses under 5 % of a CPU for three 500 ms windows in a row (at most
 * `capMs`): longer than the evaluator's poll interval (`WORKER_POLL_MS`, 1 s), so a pass still due
 * is seen. Its CPU time from /proc, not the process's (the profiler's sampling thread has its own)
 * nor the event loop's utilisation (the sampler's signals wake the loop all the time).
 */
async function quiet(capMs: number): Promise<number> {
  const t0 = performance.now();
  let calm = 0;
  while (calm < 3 && performance.now() - t0 < capMs) {
    const c0 = mainThreadCpuUs();
    await new Promise((r) => setTimeout(r, 500));
    const us = mainThreadCpuUs() - c0;
    if (process.env.PROFILE_DEBUG) process.stderr.write(`quiet: ${us} µs of CPU in 500 ms\n`);
    calm = us < 25_000 ? calm + 1 : 0;
  }
  return performance.now() - t0;
}


async function main(): Promise<void> {
  const m = await load();
  const dataDir = process.env.DATA_DIR!;
  const config = m.config.loadConfig({
    PORT: process.env.PORT,
    DATA_DIR: dataDir,
    DATABASE_URL: process.env.DATABASE_URL,
    LOG_LEVEL: 'info',
    // The per-credential limit would cap the run at 20 req/s: we measure the service, not the limiter.
    RATE_LIMIT_PER_MINUTE: '10000000',
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  });
  const schema = process.env.PROFILE_SCHEMA;
  const handle = await m.database.openDatabase(
    config.databaseUrl ? { databaseUrl: config.databaseUrl, ...(schema ? { schema } : {}) } : { inMemory: true },
  );
  const service = await m.server.startService(config, { handle, announce: false });
  const dev = await m.developers.createDeveloper(handle.db, { env: 'sandbox', name: 'profile bench' });
  const doc = m.seed.generateDirectory(Number(process.env.PROFILE_PROVIDERS ?? 320), 808);
  await handle.db.transaction().execute((trx) => m.write.writeDirectory(trx, 'sandbox', doc, { developerId: dev.developer_id }));
  await sql`ANALYZE`.execute(handle.db);

  // As bench/scheduling.ts picks them, but of every specialty (each provider-location with its
  // provider's first visit reason), so the bookings spread over many provider-locations and days:
  // active provider-locations that take a self-pay patient, one per provider (a provider's
  // locations share its time).
  const pls = await bookableRows(handle.db, dev.developer_id);
  const onePerProvider = [...new Map(pls.map((p) => [p.provider_id, p])).values()];
  const byReason = new Map<string, typeof onePerProvider>();
  for (const p of onePerProvider) byReason.set(p.reason, [...(byReason.get(p.reason) ?? []), p]);
  // The first free slot of each (provider-location, day), day by day, provider-location by provider-location.
  const byDay = new Map<string, Slot[]>();
  for (const [reason, group] of byReason) {
    const free = await m.slots.computeAvailability(handle.db, {
      env: 'sandbox', providerLocationIds: group.map((p) => p.id), visitReasonId: reason, patientType: 'new',
      from: DateTime.utc().plus({ days: 2 }).toISODate()!, to: DateTime.utc().plus({ days: 30 }).toISODate()!,
    });
    for (const [pl, a] of free) {
      const seen = new Set<string>();
      for (const s of a.slots) {
        const day = s.startTime.slice(0, 10);
        if (seen.has(day)) continue;
        seen.add(day);
        byDay.set(day, [...(byDay.get(day) ?? []), { pl, start: s.startTime, reason }]);
      }
    }
  }
  const slots = [...byDay.keys()].sort().flatMap((d) => byDay.get(d)!);
  const ready: Ready = {
    type: 'ready', url: service.url, clientId: dev.client_id, clientSecret: dev.client_secret, audience: config.audience,
    providerLocations: onePerProvider.length, slots,
  };
  // The seeded directory's background work (summaries, first availability) is not the requests'.
  await quiet(120_000);
  send(ready);

  const session = new Session();
  session.connect();
  let started: { cpu: number; t: number } | undefined;
  process.on('message', (msg: string) => {
    void (async () => {
      if (msg === 'start') {
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: Number(process.env.PROFILE_INTERVAL_US ?? 500) });
        await session.post('Profiler.start');
        started = { cpu: mainThreadCpuUs(), t: performance.now() };
        send({ type: 'started' });
      } else if (msg === 'stop' && started) {
        // Background work the load left (the evaluator confirming bookings) belongs to the requests.
        const settleMs = await quiet(30_000);
        const cpuUs = mainThreadCpuUs() - started.cpu;
        const wallMs = performance.now() - started.t;
        const { profile } = await session.post('Profiler.stop');
        const due = await sql<{ n: string }>`SELECT count(*) AS n FROM appointments WHERE evaluate_after <= now()`.execute(handle.db);
        const profileFile = join(dataDir, 'server.cpuprofile');
        writeFileSync(profileFile, JSON.stringify(profile));
        const stopped: Stopped = { type: 'stopped', profileFile, cpuUs, wallMs, settleMs, dueLeft: Number(due.rows[0]!.n) };
        send(stopped);
      } else if (msg === 'exit') {
        session.disconnect();
        await service.close();
        await handle.close();
        process.exit(0);
      }
    })().catch((err: unknown) => {
      process.stderr.write(`profile-server: ${String(err)}\n`);
      process.exit(1);
    });
  });
}

await main();
