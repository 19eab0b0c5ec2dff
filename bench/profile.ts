/**
 * Per-request CPU breakdown of the service (issue #20 §1; docs/performance.md, "Per-request CPU
 * breakdown (issue #20 §1)"): for each source tree (the commits of `--before`, each one's `src`
 * extracted with `git archive` into a temporary directory, then `after`: ./src) and each path (a read
 * `GET /v1/appointments/{id}`, a booking `POST /v1/appointments` and availability for one
 * provider-location's default window), the service runs in its own child process
 * (bench/profile-server.ts) with V8's sampling profiler on, this process drives a fixed number of
 * requests with autocannon (10 connections, in a worker thread), and the profile is cut into
 * categories (bench/cpu-profile-categories.ts). On PostgreSQL the server backends serving the
 * child's connections are found by their client ports and their CPU time read from /proc.
 *
 * `node --import tsx bench/profile.ts [--before <commit>[,<commit>…]] [--paths read,booking,availability]`
 * `--before` defaults to `36b1beb~1,800dbbe` (before any issue #20 change; after the logging change).
 * Embedded PGlite in memory by default; `BENCH_DATABASE_URL` for PostgreSQL (a scratch schema per
 * run). Writes its engine's section of bench/results.md. Profiles stay in temporary directories.
 * Knobs for trying it out: `PROFILE_SCALE` (request counts × it), `PROFILE_PROVIDERS` (default 320),
 * `PROFILE_INTERVAL_US` (sampling interval, default 500), `PROFILE_DEBUG=1` (the child's settling),
 * `PROFILE_KEEP=<dir>` (a copy of each `.cpuprofile` there, for Chrome's DevTools).
 */
import { spawn, execSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sourceTreeOf } from './source-tree.js';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { categorise, type Breakdown, type CpuProfile } from './cpu-profile-categories.js';
import { backendCpuMs, portsOf } from './profile-backends.js';
import { writeProfileSection, type PathRun } from './profile-report.js';
import type { Ready, Stopped } from './profile-server.js';
import { bookingBody } from './scheduling.js';
import { createScratchSchema } from './scratch-schema.js';

const ROOT = resolve(import.meta.dirname, '..');
const BODIES_MODULE = join(import.meta.dirname, 'request-bodies.cjs');
const say = (s: string) => process.stdout.write(`${s}\n`);

/**
 * Requests per path: measured, and sent before the profiler starts (JIT and connection pool warm).
 * `PROFILE_SCALE` (default 1) scales them for a quick try.
 */
const scale = Number(process.env.PROFILE_SCALE ?? 1);
const n = (x: number) => Math.max(10, Math.round(x * scale));
const LOAD = {
  read: { measured: n(3000), warm: n(300) },
  booking: { measured: n(1500), warm: n(150) },
  availability: { measured: n(1500), warm: n(150) },
};
type PathName = keyof typeof LOAD;

/** A `src` tree of `commit` in a temporary directory (bench/source-tree.ts). */
const treeOf = (commit: string) => sourceTreeOf(commit, 'profile-before');

function nextMessage<T extends { type: string }>(child: ChildProcess, type: T['type']): Promise<T> {
  return new Promise((resolveMsg, reject) => {
    const onMsg = (m: T) => {
      if (m?.type !== type) return;
      child.off('message', onMsg);
      child.off('exit', onExit);
      resolveMsg(m);
    };
    const onExit = (code: number | null) => reject(new Error(`profile server exited (${code}) before '${type}'`));
    child.on('message', onMsg);
    child.once('exit', onExit);
  });
}

/** `amount` requests with 10 connections (autocannon in a worker thread); per-request bodies in turn. */
async function drive(url: string, amount: number, opts: { method?: 'GET' | 'POST'; headers: Record<string, string>; bodies?: string[] }) {
  const r = await autocannon({
    url,
    method: opts.method ?? 'GET',
    headers: { ...(opts.bodies ? { 'content-type': 'application/json' } : {}), ...opts.headers },
    ...(opts.bodies ? { requests: [{ setupRequest: BODIES_MODULE }], carebookBodies: opts.bodies } : {}),
    connections: 10,
    amount,
    workers: 1,
  } as autocannon.Options);
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors, sent: r.requests.total };
}

async function runPath(side: string, src: string, path: PathName, runNo: number, dbUrl: string | undefined): Promise<PathRun> {
  const dataDir = mkdtempSync(join(tmpdir(), 'profile-run-'));
  const port = 25000 + ((process.pid * 7 + runNo) % 7000);
  const scratch = dbUrl ? await createScratchSchema(dbUrl, 'bench_prof') : undefined;
  const admin = dbUrl ? new pg.Client({ connectionString: dbUrl }) : undefined;
  await admin?.connect();
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'profile-server.ts')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    env: { ...process.env, PROFILE_SRC: src, DATA_DIR: dataDir, PORT: String(port), DATABASE_URL: dbUrl ?? '', ...(scratch ? { PROFILE_SCHEMA: scratch.schema } : {}) },
  });
  // The service's log lines (one JSON line each) are drained and counted, as a log collector would read them.
  let logLines = 0;
  child.stdout!.on('data', (b: Buffer) => {
    for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) logLines++;
  });
  try {
    const ready = await nextMessage<Ready>(child, 'ready');
    const tokenRes = await fetch(`${ready.url}/auth/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: ready.clientId, client_secret: ready.clientSecret, audience: ready.audience }),
    });
    if (runNo === 0) say(`  ${ready.providerLocations} provider-locations (one per provider) take a self-pay patient; ${ready.slots.length} free (provider-location, day) slots`);
    const token = ((await tokenRes.json()) as { access_token: string }).access_token;
    const headers = { authorization: `Bearer ${token}` };
    const bodies = ready.slots.map((s) => JSON.stringify(bookingBody(s.pl, s.start, s.reason)));
    const need = 1 + LOAD.booking.warm + LOAD.booking.measured;
    if (path === 'booking' && bodies.length < need) throw new Error(`only ${bodies.length} free (provider-location, day) slots; ${need} needed`);
    const readRes = await fetch(`${ready.url}/v1/appointments`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: bodies[0]! });
    const readId = ((await readRes.json()) as { data: { appointment_id: string } }).data.appointment_id;
    const target = {
      read: { url: `${ready.url}/v1/appointments/${readId}`, warm: undefined, measured: undefined },
      booking: { url: `${ready.url}/v1/appointments`, warm: bodies.slice(1, 1 + LOAD.booking.warm), measured: bodies.slice(1 + LOAD.booking.warm, need) },
      availability: {
        url: `${ready.url}/v1/provider_locations/availability?${new URLSearchParams({ provider_location_ids: ready.slots[0]!.pl, visit_reason_id: ready.slots[0]!.reason, patient_type: 'new' })}`,
        warm: undefined,
        measured: undefined,
      },
    }[path];
    const method = path === 'booking' ? 'POST' : 'GET';
    const warm = await drive(target.url, LOAD[path].warm, { method, headers, ...(target.warm ? { bodies: target.warm } : {}) });
    if (warm.non2xx) throw new Error(`${side} ${path}: ${warm.non2xx} of the warm-up requests failed`);

    const load1 = loadavg()[0]!;
    const startedMsg = nextMessage(child, 'started');
    child.send('start');
    await startedMsg;
    const ports = dbUrl ? portsOf(child.pid!, Number(new URL(dbUrl).port || 5432)) : [];
    const server0 = admin ? await backendCpuMs(admin, ports) : undefined;
    const logs0 = logLines;
    const run = await drive(target.url, LOAD[path].measured, { method, headers, ...(target.measured ? { bodies: target.measured } : {}) });
    const stoppedMsg = nextMessage<Stopped>(child, 'stopped');
    child.send('stop');
    const stopped = await stoppedMsg;
    const server1 = admin ? await backendCpuMs(admin, portsOf(child.pid!, Number(new URL(dbUrl!).port || 5432))) : undefined;
    if (process.env.PROFILE_KEEP) copyFileSync(stopped.profileFile, join(process.env.PROFILE_KEEP, `${side}-${path}-${runNo}.cpuprofile`));
    const profile = JSON.parse(readFileSync(stopped.profileFile, 'utf8')) as CpuProfile;
    const breakdown: Breakdown = categorise(profile);
    const serverUs = server0 && server1 ? [...server1].reduce((s, [pid, ms]) => s + (ms - (server0.get(pid) ?? 0)), 0) * 1000 : undefined;
    const r: PathRun = {
      side, path, requests: run.sent, non2xx: run.non2xx, rps: run.rps, p50: run.p50, p99: run.p99, load1,
      breakdown, processCpuUs: stopped.cpuUs, settleMs: stopped.settleMs, dueLeft: stopped.dueLeft, logLines: logLines - logs0,
      ...(serverUs !== undefined ? { serverUs } : {}),
    };
    say(
      `  ${side} ${path}: ${r.requests} requests (${r.non2xx} non-2xx) in ${(stopped.wallMs / 1000).toFixed(1)} s (${(stopped.settleMs / 1000).toFixed(1)} s of it settling), ` +
        `main thread ${(r.processCpuUs / r.requests).toFixed(0)} µs/req, sampled ${(breakdown.busyUs / r.requests).toFixed(0)} µs/req` +
        `${serverUs !== undefined ? `, PostgreSQL backends ${(serverUs / r.requests).toFixed(0)} µs/req` : ''}; ${r.dueLeft} left due; load ${load1.toFixed(2)}`,
    );
    return r;
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    if (child.exitCode === null) child.send('exit');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    if (admin && scratch) {
      await admin.query(`DROP SCHEMA IF EXISTS "${scratch.schema}" CASCADE`);
      await admin.end();
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The trees measured, in order: each commit of `--before` (comma-separated; default the commit
 * before the first issue #20 change, 36b1beb~1, and 800dbbe, after the logging change but before
 * the rest), then `after` (./src).
 */
function sidesOf(before: string): { label: string; ref?: string }[] {
  const refs = before.split(',').filter(Boolean);
  const short = (ref: string) => execSync(`git -C ${JSON.stringify(ROOT)} rev-parse --short ${JSON.stringify(`${ref}^{commit}`)}`, { encoding: 'utf8' }).trim();
  return [...refs.map((ref) => ({ label: short(ref), ref })), { label: 'after' }];
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { before: { type: 'string', default: '36b1beb~1,800dbbe' }, paths: { type: 'string', default: 'read,booking,availability' } } });
  const dbUrl = process.env.BENCH_DATABASE_URL || undefined;
  const engine = dbUrl ? `PostgreSQL (${new URL(dbUrl).host})` : 'PGlite (in memory)';
  const paths = values.paths!.split(',') as PathName[];
  const sides = sidesOf(values.before!);
  const trees = new Map(sides.filter((s) => s.ref).map((s) => [s.label, treeOf(s.ref!)]));
  const started = new Date();
  say(`Per-request CPU profile on ${engine}: ${sides.map((s) => s.label).join(', ')} (after = ./src); load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const runs: PathRun[] = [];
  try {
    let n = 0;
    for (const path of paths) {
      // The trees of one path back to back, so they meet the same phase of the machine.
      for (const side of sides) runs.push(await runPath(side.label, trees.get(side.label)?.src ?? join(ROOT, 'src'), path, n++, dbUrl));
    }
  } finally {
    for (const t of trees.values()) t.cleanup();
  }
  const section = await writeProfileSection(join(import.meta.dirname, 'results.md'), { engine, before: sides.filter((s) => s.ref).map((s) => `${s.label} (${s.ref})`), started, runs, load: loadavg() });
  say(`\n${section}`);
}

await main();
