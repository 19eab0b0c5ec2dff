/**
 * The booking evaluator under a backlog (issue #20 §3, docs/performance.md "The evaluator"): books N
 * due appointments (bench/evaluator-data.ts: 70 % new bookings to confirm, 10 % not offered, 10 %
 * reschedules that succeed, 10 % that fail) spread over a few hundred provider-locations, then runs
 * the evaluator job's passes back to back, as its loop does under a backlog, until nothing is due.
 * For each run it reports:
 * - wall time to drain the backlog, and the process's CPU time meanwhile (on PGlite the engine runs
 *   in this process, so that is all of it; on PostgreSQL the evaluator's statements all go through one
 *   connection, and its server backend's CPU time is read from /proc when the server is on this host);
 * - statements sent per booking (BEGIN, COMMIT and savepoints included: bench/statement-meter.ts);
 * - each transaction's duration from BEGIN done to COMMIT done: on PGlite the time it holds the
 *   engine's one lock, which every API request waits for; and the CPU time the process spent in it
 *   (far less than its duration when the process waited for a CPU on a busy host);
 * - a probe's latency: `SELECT 1` every 2 ms through another handle on the same database, timed from
 *   when it was due (on PGlite the same engine in the same process, so it waits for the event loop and
 *   the engine's lock as an API request would).
 * Then it checks every booking got its outcome, one delivered event and one audit row.
 *
 * `node --import tsx bench/evaluator.ts [--before <commit>] [--sizes 200,2000] [--rounds 3]`
 * On embedded PGlite (in memory) by default; `BENCH_DATABASE_URL` for PostgreSQL (a fresh schema,
 * dropped at the end). `--before <commit>` also runs the evaluator job of that commit (its `src`,
 * extracted with `git archive` into a temporary directory) on the same database in the same process,
 * alternating which goes first from round to round.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { JobDeps } from '../src/jobs/job-deps.js';
import type { Job, PassContext } from '../src/jobs/loop.js';
import { prepareBenchData, type BenchData } from './evaluator-data.js';
import { createScratchSchema } from './scratch-schema.js';
import { sourceTreeOf } from './source-tree.js';
import { StatementMeter } from './statement-meter.js';

type JobFactory = (deps: JobDeps) => Job;
interface Side {
  label: string;
  job: JobFactory;
}
interface Run {
  side: string;
  size: number;
  round: number;
  wallMs: number;
  cpuMs: number;
  /** PostgreSQL: the server backend's CPU time (undefined on PGlite, whose engine is in `cpuMs`). */
  serverCpuMs: number | undefined;
  passes: number;
  statementsPerBooking: number;
  transactions: number;
  txMeanMs: number;
  txP50Ms: number;
  txMaxMs: number;
  txCpuMeanMs: number;
  txCpuMaxMs: number;
  probeP50Ms: number;
  probeP99Ms: number;
  probeMaxMs: number;
}

const say = (s: string) => process.stdout.write(`${s}\n`);
const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const median = (xs: number[]) => quantile(xs, 0.5);

/** The evaluator job of `commit`: its `src` extracted into a temporary directory and imported from there. */
async function jobOfCommit(commit: string): Promise<{ job: JobFactory; cleanup: () => void }> {
  const tree = sourceTreeOf(commit, 'evaluator-before');
  const mod = (await import(join(tree.src, 'jobs/evaluator.ts'))) as { evaluatorJob: JobFactory };
  return { job: mod.evaluatorJob, cleanup: tree.cleanup };
}

/**
 * CPU milliseconds the PostgreSQL backend serving `db` has used so far (its /proc entry: the server
 * must run on this host), with the backend's pid; undefined where it cannot be read.
 */
async function serverCpu(db: DatabaseHandle['db']): Promise<{ pid: number; ms: number } | undefined> {
  const pid = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db)).rows[0]!.pid;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime (fields 14 and 15 of the line, 12 and 13 after the command), in clock ticks of 10 ms.
    return { pid, ms: (Number(fields[11]) + Number(fields[12])) * 10 };
  } catch {
    return undefined;
  }
}

async function open(meter: StatementMeter): Promise<{ measured: DatabaseHandle; probe: () => Promise<unknown>; label: string; close: () => Promise<void> }> {
  const url = process.env.BENCH_DATABASE_URL;
  if (!url) {
    const measured = await openDatabase({ inMemory: true, wrapDialect: meter.wrap });
    return { measured, probe: () => measured.pglite!.query('SELECT 1'), label: 'PGlite (in memory)', close: () => measured.close() };
  }
  const { schema, drop } = await createScratchSchema(url, 'bench_eval');
  // One connection: every statement of the evaluator goes to one backend, whose CPU time is read from /proc.
  const measured = await openDatabase({ databaseUrl: url, schema, poolSize: 1, wrapDialect: meter.wrap });
  const other = await openDatabase({ databaseUrl: url, schema, poolSize: 2 });
  return {
    measured,
    probe: () => sql`SELECT 1`.execute(other.db),
    label: `PostgreSQL (${new URL(url).host})`,
    close: async () => {
      await drop(other.db);
      await other.close();
      await measured.close();
    },
  };
}

/** Runs `side`'s job passes back to back until a pass finds less than a full batch; measures it. */
async function drain(side: Side, deps: JobDeps, meter: StatementMeter, probe: () => Promise<unknown>, size: number, round: number): Promise<Run> {
  const job = side.job(deps);
  const ctx: PassContext = {
    signal: new AbortController().signal,
    logger: { error: () => undefined, debug: () => undefined } as never,
    logError: (err) => say(`  ${side.label}: row failed: ${String(err)}`),
    retire: () => undefined,
  };
  const probes: number[] = [];
  let probing = true;
  const prober = (async () => {
    while (probing) {
      // Timed from when it was due, not from when its timer fired: a request arriving meanwhile waits for
      // the event loop (an in-memory PGlite runs a whole transaction without yielding to it) and then
      // for the engine's lock.
      const due = performance.now() + 2;
      await new Promise((r) => setTimeout(r, 2));
      await probe();
      probes.push(performance.now() - due);
    }
  })();
  const server0 = deps.engine === 'postgres' ? await serverCpu(deps.db) : undefined;
  meter.reset();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let passes = 0;
  for (;;) {
    const items = await job.pass(ctx);
    passes++;
    if (items < (job.batch ?? Infinity)) break;
    // The loop schedules the next pass of a full batch with setTimeout(0): waiting statements run first.
    await new Promise((r) => setTimeout(r, 0));
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  probing = false;
  await prober;
  const m = meter.snapshot();
  const server1 = server0 ? await serverCpu(deps.db) : undefined;
  const serverCpuMs = server0 && server1 && server1.pid === server0.pid ? server1.ms - server0.ms : undefined;
  return {
    side: side.label, size, round, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, serverCpuMs, passes,
    statementsPerBooking: m.statements / size, transactions: m.transactions,
    txMeanMs: m.transactionMs.reduce((a, b) => a + b, 0) / Math.max(1, m.transactions), txP50Ms: median(m.transactionMs), txMaxMs: Math.max(0, ...m.transactionMs),
    txCpuMeanMs: m.transactionCpuMs.reduce((a, b) => a + b, 0) / Math.max(1, m.transactions), txCpuMaxMs: Math.max(0, ...m.transactionCpuMs),
    probeP50Ms: median(probes), probeP99Ms: quantile(probes, 0.99), probeMaxMs: Math.max(0, ...probes),
  };
}

async function check(data: BenchData, expected: Awaited<ReturnType<BenchData['seedDue']>>, size: number, side: string): Promise<void> {
  const o = await data.outcome();
  const problems: string[] = [];
  for (const [status, n] of Object.entries(expected)) if ((o.statuses[status] ?? 0) !== n) problems.push(`${status}: ${o.statuses[status] ?? 0}, expected ${n}`);
  if (o.dueLeft !== 0) problems.push(`${o.dueLeft} still due`);
  if (o.serviceEvents !== size) problems.push(`${o.serviceEvents} delivered events, expected ${size}`);
  if (o.serviceAudits !== size) problems.push(`${o.serviceAudits} service audit rows, expected ${size}`);
  if (problems.length) throw new Error(`${side}, ${size} bookings: ${problems.join('; ')}`);
}

const f = (n: number, d = 1) => n.toFixed(d);
const row = (r: Run) =>
  `| ${r.size} | ${r.side} | ${r.round} | ${f(r.wallMs, 0)} | ${f((r.size / r.wallMs) * 1000, 0)} | ${f(r.cpuMs, 0)} | ${r.serverCpuMs === undefined ? '-' : f(r.serverCpuMs, 0)} | ${r.passes} | ${f(r.statementsPerBooking, 2)} | ${r.transactions} | ${f(r.txMeanMs)} | ${f(r.txP50Ms)} | ${f(r.txMaxMs)} | ${f(r.txCpuMeanMs)} | ${f(r.txCpuMaxMs)} | ${f(r.probeP50Ms, 2)} | ${f(r.probeP99Ms)} | ${f(r.probeMaxMs)} |`;
const HEADER = [
  '| bookings | evaluator | round | drain ms | bookings/s | CPU ms | server CPU ms | passes | statements/booking | transactions | tx mean ms | tx p50 ms | tx max ms | tx CPU mean ms | tx CPU max ms | probe p50 ms | probe p99 ms | probe max ms |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
];

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { before: { type: 'string' }, sizes: { type: 'string', default: '200,2000' }, rounds: { type: 'string', default: '3' } } });
  const sizes = values.sizes!.split(',').map(Number);
  const rounds = Number(values.rounds);
  const { evaluatorJob } = await import('../src/jobs/evaluator.js');
  const before = values.before ? await jobOfCommit(values.before) : undefined;
  const sides: Side[] = [...(before ? [{ label: `before (${values.before})`, job: before.job }] : []), { label: 'after', job: evaluatorJob }];

  const meter = new StatementMeter();
  const h = await open(meter);
  try {
    await migrateToLatest(h.measured.db);
    const t = performance.now();
    const data = await prepareBenchData(h.measured.db, { providers: 600, places: 400 });
    say(`evaluator bench on ${h.label}, Node ${process.version}; ${data.places} provider-locations with bookings (directory written in ${f((performance.now() - t) / 1000)} s)`);
    const config = loadConfig({ LOG_LEVEL: 'silent', KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') });
    const deps: JobDeps = { db: h.measured.db, config, engine: h.measured.engine };
    const runs: Run[] = [];
    say(['', ...HEADER].join('\n'));
    for (let round = 1; round <= rounds; round++) {
      for (const size of sizes) {
        const order = round % 2 === 1 ? sides : [...sides].reverse();
        for (const side of order) {
          await data.clear();
          const expected = await data.seedDue(size);
          const r = await drain(side, deps, meter, h.probe, size, round);
          await check(data, expected, size, side.label);
          runs.push(r);
          say(row(r));
        }
      }
    }
    await data.clear();
    say(`\nMedians over ${rounds} rounds (${h.label}):\n`);
    say('| bookings | evaluator | drain ms | bookings/s | CPU ms | server CPU ms | statements/booking | tx mean ms | tx max ms | tx CPU mean ms | tx CPU max ms | probe p99 ms | probe max ms |');
    say('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const size of sizes) {
      for (const side of sides) {
        const rs = runs.filter((r) => r.size === size && r.side === side.label);
        const m = (k: keyof Run) => median(rs.map((r) => r[k] as number));
        const server = rs.every((r) => r.serverCpuMs !== undefined) ? f(m('serverCpuMs'), 0) : '-';
        say(`| ${size} | ${side.label} | ${f(m('wallMs'), 0)} | ${f((size / m('wallMs')) * 1000, 0)} | ${f(m('cpuMs'), 0)} | ${server} | ${f(m('statementsPerBooking'), 2)} | ${f(m('txMeanMs'))} | ${f(m('txMaxMs'))} | ${f(m('txCpuMeanMs'))} | ${f(m('txCpuMaxMs'))} | ${f(m('probeP99Ms'))} | ${f(m('probeMaxMs'))} |`);
      }
    }
  } finally {
    await h.close();
    before?.cleanup();
  }
}

await main();
