/**
 * `npm run soak`: starts the service as a child process (`carebook serve`, sandbox, with the demo
 * directory), measures its capacity on a mixed workload with autocannon, then runs the same mix for
 * SOAK_SECONDS (default 600) at SOAK_LOAD (default 0.7) of that capacity, sampling the service's RSS
 * every 5 s and the latency per window and per kind of request.
 *
 * The verdict is read against a control measured in the same run (docs/operations.md, "The soak's
 * verdict"): this host's CPU is unsteady, so a bare Fastify server with fixed work shows a p99/p50
 * far above any fixed target. Before and after the service's soak, the control soak of
 * bench/control.ts runs with the same generator, connections and load share, SOAK_CONTROL_SECONDS
 * (default min(120, SOAK_SECONDS)) in all, half before and half after, pooled. The soak passes when
 * - the service's p99/p50 is at most SOAK_TAIL_FACTOR (default 1.5) × the control's p99/p50,
 * - RSS grows less than 10 % from the first minute of the soak to its last (mean of the 5-s samples;
 *   the capacity run and the settling before it are the warm-up), and
 * - no request got a 5xx.
 * It prints both ratios and both RSS figures, and exits 1 when a target is missed (SOAK_STRICT=false
 * only reports).
 *
 * Mix: directory reads 35 % (providers by NPI, provider-location search, specialties, schedulable
 * entities), availability 25 %, bookings 10 %, appointment reads 30 % (list and single).
 * Database: embedded PGlite in a temporary DATA_DIR, or SOAK_DATABASE_URL (a fresh PostgreSQL
 * database is created on that server and dropped afterwards; SOAK_KEEP_DATABASE=true keeps it).
 *
 * Between the capacity run and the soak it waits for the service's background backlog (bookings to
 * evaluate, webhook events to send) to drain. Besides latency and memory it reports where the CPU
 * went (service, PostgreSQL, generator), the service's own latency from its /metrics histogram, the
 * generator's lag, and the service's event-loop delay and GC. Diagnostics: SOAK_TRACE=file writes
 * every request as CSV; SOAK_NODE_ARGS passes node flags to the service (e.g. --cpu-prof).
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { latencySummary, runControl, type ControlRun } from './control.js';
import { pacedLoad, sendRequest } from './paced-load.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const LOAD = Number(process.env.SOAK_LOAD ?? 0.7);
const CAPACITY_SECONDS = Number(process.env.SOAK_CAPACITY_SECONDS ?? 15);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 16);
const PORT = Number(process.env.SOAK_PORT ?? 18080);
/** API processes (`serve --processes`); more than one needs SOAK_DATABASE_URL. */
const PROCESSES = Number(process.env.SOAK_PROCESSES ?? 1);
const STRICT = process.env.SOAK_STRICT !== 'false';
/** Seconds of the control soak in all (half before the service's soak, half after). */
const CONTROL_SECONDS = Number(process.env.SOAK_CONTROL_SECONDS ?? Math.min(120, SECONDS));
const CONTROL_PORT = Number(process.env.SOAK_CONTROL_PORT ?? 18090);
/** The service's p99/p50 may be at most this many times the control's. */
const TAIL_FACTOR = Number(process.env.SOAK_TAIL_FACTOR ?? 1.5);
/** RSS growth from the first minute of the soak to the last must stay under this share. */
const RSS_GROWTH_LIMIT = 0.1;
const base = `http://127.0.0.1:${PORT}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function json<T>(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as T };
}

/** A process and its descendants (the cluster's primary and its API processes; tsx's esbuild helpers). */
async function treeOf(pid: number): Promise<Set<number>> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid) parents.set(Number(entry), ppid);
  }
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [p, pp] of parents) {
      if (tree.has(p) || !tree.has(pp)) continue;
      tree.add(p);
      grew = true;
    }
  }
  return tree;
}

/** The process tree `rssOf` reads, found again at most every 60 s: walking all of /proc every 5 s would load the generator itself. */
let knownTree: { pid: number; at: number; pids: Set<number> } | undefined;

/** RSS of a process and its descendants. */
async function rssOf(pid: number): Promise<number> {
  if (!knownTree || knownTree.pid !== pid || performance.now() - knownTree.at > 60_000) knownTree = { pid, at: performance.now(), pids: await treeOf(pid) };
  let total = 0;
  for (const p of knownTree.pids) {
    const status = await readFile(`/proc/${p}/status`, 'utf8').catch(() => '');
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    if (m) total += Number(m[1]) * 1024;
  }
  return total;
}

/**
 * CPU seconds (user + system) used so far, per process: the service's tree, every `postgres`
 * process on the machine, and this process (the load generator). Summed per group by the caller.
 * Processes that exit between two readings drop out, so the groups are a lower bound.
 */
async function cpuSeconds(servicePid: number): Promise<{ at: number; service: number; postgres: number; generator: number; machineBusy: number; machineTotal: number }> {
  const tick = 100; // USER_HZ on Linux
  const service = await treeOf(servicePid);
  let svc = 0;
  let postgres = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    // After the comm: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime …
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpu = (Number(f[11]) + Number(f[12])) / tick;
    if (service.has(Number(entry))) svc += cpu;
    else if (comm === 'postgres') postgres += cpu;
  }
  const self = process.cpuUsage();
  // /proc/stat's first line: cpu user nice system idle iowait irq softirq steal …
  const all = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = all[3]! + all[4]!;
  const total = all.slice(0, 8).reduce((a, b) => a + b, 0);
  return { at: performance.now(), service: svc, postgres, generator: (self.user + self.system) / 1e6, machineBusy: (total - idle) / tick, machineTotal: total / tick };
}

/**
 * The service's own request-latency distribution over the soak, from the `/metrics` histogram
 * (all routes summed): the share of requests above each bucket bound and p50/p99 interpolated
 * within buckets. It runs from Fastify's receipt of the request to its response, so the gap to the
 * generator's figures is time before the service read the request (sockets, CPU, the generator).
 */
function histogramOf(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^carebook_http_request_duration_seconds_bucket\{le="([^"]+)",[^}]*\} ([0-9.e+-]+)$/.exec(line);
    if (match) m.set(match[1]!, (m.get(match[1]!) ?? 0) + Number(match[2]));
  }
  return m;
}

function histogramPercentile(bounds: number[], cumulative: number[], p: number): number {
  const total = cumulative.at(-1)!;
  const target = (p / 100) * total;
  for (let i = 0; i < bounds.length; i++) {
    if (cumulative[i]! >= target) {
      const lo = i === 0 ? 0 : bounds[i - 1]!;
      const below = i === 0 ? 0 : cumulative[i - 1]!;
      const inBucket = cumulative[i]! - below;
      return lo + (bounds[i]! - lo) * (inBucket ? (target - below) / inBucket : 0);
    }
  }
  return Infinity;
}

/**
 * Waits until the service's background backlog is done: on PostgreSQL, until no booking is due for
 * evaluation and no webhook event is due for delivery (at most SOAK_SETTLE_MAX_SECONDS, default
 * 180); on the embedded database, which admits no second connection, SOAK_SETTLE_SECONDS (default
 * 20). Says what it waited for.
 */
async function settle(databaseUrl: string | undefined): Promise<string> {
  const t0 = performance.now();
  if (!databaseUrl) {
    await sleep(Number(process.env.SOAK_SETTLE_SECONDS ?? 20) * 1000);
    return `waited ${((performance.now() - t0) / 1000).toFixed(0)} s (embedded database: a fixed pause)`;
  }
  const max = Number(process.env.SOAK_SETTLE_MAX_SECONDS ?? 180) * 1000;
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    let first: string | undefined;
    for (;;) {
      const { rows } = await c.query<{ evaluations: string; events: string }>(
        `SELECT (SELECT count(*) FROM appointments WHERE evaluate_after <= now()) AS evaluations,
                (SELECT count(*) FROM outbox_events WHERE status = 'pending' AND next_attempt_at <= now()) AS events`,
      );
      const { evaluations, events } = rows[0]!;
      first ??= `${evaluations} bookings to evaluate and ${events} webhook events due`;
      if ((Number(evaluations) === 0 && Number(events) === 0) || performance.now() - t0 > max) {
        return `${first} after the capacity run; ${evaluations} and ${events} after ${((performance.now() - t0) / 1000).toFixed(1)} s`;
      }
      await sleep(250);
    }
  } finally {
    await c.end();
  }
}

function pct(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One half of the control soak (bench/control.ts) with the soak's generator, connections and load share. */
function controlHalf(): Promise<ControlRun> {
  return runControl(
    { port: CONTROL_PORT, connections: CONNECTIONS, capacitySeconds: Math.min(CAPACITY_SECONDS, 10), load: LOAD, seconds: CONTROL_SECONDS / 2 },
    (line) => process.stdout.write(`  ${line}\n`),
  );
}

async function main(): Promise<void> {
  // The control first, before the service exists: its tail is this host's tail for this method.
  process.stdout.write(`control soak, first half (${CONTROL_SECONDS / 2} s):\n`);
  const controlRuns: ControlRun[] = [await controlHalf()];
  const dataDir = await mkdtemp(join(tmpdir(), 'carebook-soak-'));
  let dropDb: (() => Promise<void>) | undefined;
  let databaseUrl: string | undefined;
  if (process.env.SOAK_DATABASE_URL) {
    const name = `carebook_soak_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: process.env.SOAK_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const u = new URL(process.env.SOAK_DATABASE_URL);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    dropDb = async () => {
      // SOAK_KEEP_DATABASE=true keeps the soaked database for a look at its plans afterwards.
      if (process.env.SOAK_KEEP_DATABASE === 'true') return void process.stdout.write(`kept database ${name}\n`);
      const c = new pg.Client({ connectionString: process.env.SOAK_DATABASE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    };
  }
  if (PROCESSES > 1 && !databaseUrl) throw new Error('SOAK_PROCESSES > 1 needs SOAK_DATABASE_URL: the embedded database admits one process');
  // SOAK_NODE_ARGS: extra node flags for the service (e.g. `--cpu-prof --cpu-prof-dir=/tmp/cpu` to profile it).
  const child = spawn(process.execPath, [...(process.env.SOAK_NODE_ARGS?.split(' ').filter(Boolean) ?? []), 'bin/carebook.mjs', 'serve', ...(PROCESSES > 1 ? ['--processes', String(PROCESSES)] : [])], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(PORT),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '10000000',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { DATABASE_URL: '' }),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const cleanup = async () => {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await dropDb?.();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; ; i++) {
      const ok = await fetch(`${base}/readyz`).then((r) => r.ok).catch(() => false);
      if (ok) break;
      if (i > 600) throw new Error('the service did not start');
      await sleep(200);
    }
    const creds = JSON.parse(await readFile(join(dataDir, 'demo-credentials.json'), 'utf8')) as { client_id: string; client_secret: string };
    const tok = await json<{ access_token: string }>('POST', '/auth/oauth/token', { grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret, audience: `${base}/` });
    const token = tok.body.access_token;
    if (!token) throw new Error(`no token: ${JSON.stringify(tok)}`);

    // Data for the mix: provider locations, their NPIs, availability URLs and bookable slots.
    const se = await json<{ data: { schedulable_entities: { id: string; npi?: string; new_patient_availability: { url: string } }[] } }>('GET', '/v1/schedulable_entities?page_size=200', undefined, token);
    const entities = se.body.data.schedulable_entities.filter((e) => !e.id.startsWith('pr_pending') && !/^pr_(failed|manual|reschedulefailed)\|/.test(e.id));
    const npis = [...new Set(entities.map((e) => e.npi).filter((n): n is string => !!n))];
    // Availability for the default visit reason over the next week (the entity's own URL, narrowed).
    const from = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const to = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
    const availabilityPaths = entities.map((e) => {
      const u = new URL(e.new_patient_availability.url, base);
      u.searchParams.set('start_date_in_provider_local_time', from);
      u.searchParams.set('end_date_in_provider_local_time', to);
      return u.pathname + u.search;
    });
    const slots: { pl: string; start: string; visitReasonId: string }[] = [];
    for (const path of availabilityPaths.slice(0, 40)) {
      const u = new URL(path, base);
      const pl = u.searchParams.get('provider_location_ids')!;
      const visitReasonId = u.searchParams.get('visit_reason_id')!;
      // The soak's patient is self-pay without insurance: only locations that take such bookings.
      const req = await json<{ data?: { booking_requirements?: { required_fields: string[]; accepts_booking_requests_from: string[] } } }>('GET', `/v1/provider_locations/${encodeURIComponent(pl)}`, undefined, token);
      const br = req.body.data?.booking_requirements;
      if (!br || br.required_fields.includes('patient.insurance') || !br.accepts_booking_requests_from.includes('self_pay')) continue;
      const a = await json<{ data: { timeslots: { start_time: string }[] }[] }>('GET', path, undefined, token);
      for (const s of a.body.data?.[0]?.timeslots ?? []) slots.push({ pl, start: s.start_time, visitReasonId });
    }
    const bookingBody = (s: { pl: string; start: string; visitReasonId: string }, id: string) =>
      JSON.stringify({
        appointment_type: 'providers',
        data: {
          start_time: s.start, visit_reason_id: s.visitReasonId, provider_location_id: s.pl, patient_type: 'new',
          patient: { developer_patient_id: id, first_name: 'Soak', last_name: 'Test', date_of_birth: '1980-01-01', sex_at_birth: 'female', phone_number: '2125550123', email_address: 'soak@example.org', patient_address: { address1: '1 Main St', city: 'New York', state: 'NY', zip_code: '10001' } },
        },
      });
    for (const pl of [...new Set(slots.map((s) => s.pl))]) {
      const probe = slots.find((s) => s.pl === pl)!;
      const res = await fetch(`${base}/v1/appointments`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: bookingBody(probe, 'soak-probe') });
      if (res.status === 400) for (let i = slots.length - 1; i >= 0; i--) if (slots[i]!.pl === pl) slots.splice(i, 1);
    }
    if (!slots.length || !npis.length) throw new Error('no demo directory to soak against');
    const zips = ['10001', '94103', '60601', '73301', '98101', '02108'];
    const booked: string[] = [];
    const auth = { authorization: `Bearer ${token}` };
    const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
    let seq = 0;
    let reported = 0;

    /** One request of the mix, drawn at random. */
    type MixRequest = { kind: string; method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string };
    const nextRequest = (): MixRequest => {
      const r = Math.random();
      if (r < 0.1) {
        const s = pick(slots);
        seq++;
        return { kind: 'booking', method: 'POST', path: '/v1/appointments', headers: { ...auth, 'content-type': 'application/json' }, body: bookingBody(s, `soak-${seq}`) };
      }
      if (r < 0.35) return { kind: 'availability (7 days)', method: 'GET', path: pick(availabilityPaths), headers: auth };
      if (r < 0.45) return { kind: 'providers by NPI', method: 'GET', path: `/v1/providers?npis=${pick(npis)},${pick(npis)}`, headers: auth };
      if (r < 0.55) return { kind: 'provider-location search', method: 'GET', path: `/v1/provider_locations?zip_code=${pick(zips)}&visit_reason_id=${pick(slots).visitReasonId}&page_size=20`, headers: auth };
      if (r < 0.6) return { kind: 'specialties', method: 'GET', path: '/v1/specialties?page_size=50', headers: auth };
      if (r < 0.7) return { kind: 'schedulable entities (20)', method: 'GET', path: '/v1/schedulable_entities?page_size=20', headers: auth };
      if (r < 0.85 || !booked.length) return { kind: 'appointment list', method: 'GET', path: '/v1/appointments?page_size=10', headers: auth };
      return { kind: 'appointment read', method: 'GET', path: `/v1/appointments/${pick(booked)}`, headers: auth };
    };

    const run = (opts: { duration: number; connections: number }) =>
      new Promise<autocannon.Result>((resolve, reject) => {
        autocannon(
          {
            url: base,
            connections: opts.connections,
            duration: opts.duration,
            requests: [
              {
                setupRequest: (req) => Object.assign(req, nextRequest()),
                onResponse: (status, body) => {
                  if (status >= 400 && status !== 409 && reported++ < 5) process.stderr.write(`  unexpected ${status}: ${body.slice(0, 300)}\n`);
                  if (status === 200 || status === 201) {
                    if (body.includes('"pending_booking"') || body.includes('"confirmed"')) {
                      const m = /"appointment_id":"([^"]+)"/.exec(body);
                      if (m && booked.length < 5000) booked.push(m[1]!);
                    }
                  }
                },
              },
            ],
          },
          (err, result) => (err ? reject(err) : resolve(result)),
        );
      });

    /** The soak's load: {@link pacedLoad} (open loop at a constant rate; why not autocannon's rate limit is said there). */
    let soakStart = 0;
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    const send = (r: MixRequest) => sendRequest(agent, { host: '127.0.0.1', port: PORT, method: r.method, path: r.path, headers: r.headers, body: r.body });
    const paced = async (opts: { rate: number; seconds: number; onResponse: (ms: number, status: number, kind: string, at: number) => void; onIssue?: (lagMs: number) => void }) => {
      const result = await pacedLoad({
        ...opts,
        next: nextRequest,
        send,
        onResponse: (ms, status, r, at, body) => {
          opts.onResponse(ms, status, r.kind, at);
          if (status >= 400 && status !== 409 && reported++ < 5) process.stderr.write(`  unexpected ${status}: ${body.slice(0, 300)}\n`);
          if (status === 200 && r.kind === 'booking') {
            const m = /"appointment_id":"([^"]+)"/.exec(body);
            if (m && booked.length < 5000) booked.push(m[1]!);
          }
        },
      });
      soakStart = result.startedAt;
      agent.destroy();
      return { requests: { average: result.achievedRate } };
    };

    // The cost of each kind of request alone (median of 3), to read the mixed figures by.
    const kinds: [string, () => { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string }][] = [
      ['booking', () => ({ method: 'POST', path: '/v1/appointments', headers: { ...auth, 'content-type': 'application/json' }, body: bookingBody(pick(slots), `soak-kind-${seq++}`) })],
      ['availability (7 days)', () => ({ method: 'GET', path: pick(availabilityPaths), headers: auth })],
      ['providers by NPI', () => ({ method: 'GET', path: `/v1/providers?npis=${pick(npis)},${pick(npis)}`, headers: auth })],
      ['provider-location search', () => ({ method: 'GET', path: `/v1/provider_locations?zip_code=${pick(zips)}&visit_reason_id=${pick(slots).visitReasonId}&page_size=20`, headers: auth })],
      ['specialties', () => ({ method: 'GET', path: '/v1/specialties?page_size=50', headers: auth })],
      ['schedulable entities (20)', () => ({ method: 'GET', path: '/v1/schedulable_entities?page_size=20', headers: auth })],
      ['appointment list', () => ({ method: 'GET', path: '/v1/appointments?page_size=10', headers: auth })],
    ];
    for (const [name, make] of kinds) {
      const times: number[] = [];
      for (let i = 0; i < 3; i++) {
        const r = make();
        const t0 = performance.now();
        await fetch(`${base}${r.path}`, { method: r.method, headers: r.headers, ...(r.body ? { body: r.body } : {}) }).then((x) => x.arrayBuffer());
        times.push(performance.now() - t0);
      }
      process.stdout.write(`  alone: ${name.padEnd(28)} ${times.sort((a, b) => a - b)[1]!.toFixed(1)} ms\n`);
    }

    process.stdout.write(`measuring capacity (${CAPACITY_SECONDS} s, ${CONNECTIONS} connections)…\n`);
    const cap = await run({ duration: CAPACITY_SECONDS, connections: CONNECTIONS });
    const capacity = cap.requests.average;
    const rate = Math.max(1, Math.round(capacity * LOAD));
    process.stdout.write(`capacity ${capacity.toFixed(0)} req/s (p50 ${cap.latency.p50} ms, p99 ${cap.latency.p99} ms, non-2xx ${cap.non2xx}); soaking ${SECONDS} s at ${rate} req/s (${Math.round(LOAD * 100)} %)\n`);
    // The capacity run leaves background work behind (bookings to evaluate, webhook events to send):
    // the soak starts once the service has caught up, so that it measures the soak's own load.
    process.stdout.write(`  settling: ${await settle(databaseUrl)}\n`);

    const rss: { t: number; bytes: number }[] = [];
    const latencies: number[] = [];
    const byKind = new Map<string, number[]>();
    let window: number[] = [];
    const statuses = new Map<number, number>();
    const issueLags: number[] = [];
    const started = Date.now();
    // RSS every 5 s (the memory verdict reads these); a latency line every SECONDS/24.
    const rssTimer = setInterval(() => {
      void rssOf(child.pid!).then((bytes) => rss.push({ t: (Date.now() - started) / 1000, bytes }), () => undefined);
    }, 5000);
    const sampler = setInterval(() => {
      const w = window.sort((a, b) => a - b);
      window = [];
      const bytes = rss.at(-1)?.bytes ?? 0;
      process.stdout.write(`  t=${String(Math.round((Date.now() - started) / 1000)).padStart(4)} s  rss ${(bytes / 1048576).toFixed(1)} MB  window p50 ${pct(w, 50).toFixed(1)} ms  p99 ${pct(w, 99).toFixed(1)} ms  n=${w.length}\n`);
    }, Math.max(5000, (SECONDS * 1000) / 24));
    rss.push({ t: 0, bytes: await rssOf(child.pid!) });
    // The service's own event-loop delay and GC over the soak: prom-client resets its event-loop
    // histogram at each scrape, so scrape once now and once at the end (one API process answers).
    const scrape = async (): Promise<Map<string, number>> => {
      const text = await fetch(`${base}/metrics`).then((r) => r.text(), () => '');
      lastHistogram = histogramOf(text);
      const m = new Map<string, number>();
      for (const line of text.split('\n')) {
        const match = /^carebook_nodejs_(eventloop_lag_(?:p50|p99|max)_seconds|gc_duration_seconds_(?:sum|count)\{kind="(?:major|minor)"\}) ([0-9.e+-]+)$/.exec(line);
        if (match) m.set(match[1]!, Number(match[2]));
      }
      return m;
    };
    let lastHistogram = new Map<string, number>();
    // SOAK_TRACE=file writes every request of the soak (scheduled ms since start, latency ms, status, kind) as CSV.
    const trace: string[] | undefined = process.env.SOAK_TRACE ? [] : undefined;
    const gcBefore = await scrape();
    const histogramBefore = lastHistogram;
    const cpuBefore = await cpuSeconds(child.pid!);
    // autocannon splits overallRate between connections (whole requests per connection per second).
    const soak = await paced({
      rate,
      seconds: SECONDS,
      onResponse: (ms, status, kind, at) => {
        trace?.push(`${at.toFixed(1)},${ms.toFixed(2)},${status},${kind}`);
        latencies.push(ms);
        let k = byKind.get(kind);
        if (!k) byKind.set(kind, (k = []));
        k.push(ms);
        window.push(ms);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      },
      onIssue: (lag) => issueLags.push(lag),
    });
    clearInterval(sampler);
    clearInterval(rssTimer);
    const cpuAfter = await cpuSeconds(child.pid!);
    if (trace) await writeFile(process.env.SOAK_TRACE!, `# started ${Math.round(performance.timeOrigin + soakStart)} (ms since the epoch)\nat_ms,latency_ms,status,kind\n${trace.join('\n')}\n`);
    const serviceMetrics = await scrape();
    const histogramAfter = lastHistogram;
    rss.push({ t: SECONDS, bytes: await rssOf(child.pid!) });

    // The control's second half, with the service idle, so that a slow phase of the host during
    // the soak is more likely to be seen by the control as well.
    process.stdout.write(`control soak, second half (${CONTROL_SECONDS / 2} s):\n`);
    controlRuns.push(await controlHalf());

    latencies.sort((a, b) => a - b);
    const p50 = pct(latencies, 50);
    const p99 = pct(latencies, 99);
    // Memory: RSS of a garbage-collected process is a sawtooth (the heap grows to the collector's
    // threshold, then drops), so one sample against another measures where each fell on the tooth.
    // Growth is judged on the mean RSS of the last fifth of the run against the mean of the fifth
    // after warm-up (10–30 %: JIT, caches and pools filled); the peak of each and the least-squares
    // slope over the whole run after warm-up are printed too.
    const part = (a: number, b: number) => rss.filter((x) => x.t >= SECONDS * a && x.t < SECONDS * b + 1);
    const mean = (xs: { bytes: number }[]) => xs.reduce((n, x) => n + x.bytes, 0) / Math.max(1, xs.length);
    const peak = (xs: { bytes: number }[]) => Math.max(...xs.map((x) => x.bytes));
    const early = part(0.1, 0.3);
    const late = part(0.8, 1);
    const growth = mean(late) / mean(early) - 1;
    const peakGrowth = peak(late) / peak(early) - 1;
    const after = part(0.1, 1);
    const tMean = after.reduce((n, x) => n + x.t, 0) / after.length;
    const bMean = mean(after);
    const slope = after.reduce((n, x) => n + (x.t - tMean) * (x.bytes - bMean), 0) / Math.max(1e-9, after.reduce((n, x) => n + (x.t - tMean) ** 2, 0));
    const mb = (b: number) => (b / 1048576).toFixed(1);
    // The verdict's memory figure: the first minute of the soak against its last (a fifth each when
    // the soak is shorter than five minutes).
    const edge = Math.min(60, SECONDS / 5);
    const firstMinute = rss.filter((x) => x.t < edge);
    const lastMinute = rss.filter((x) => x.t >= SECONDS - edge);
    const minuteGrowth = mean(lastMinute) / mean(firstMinute) - 1;
    // The verdict's tail figure: the service's p99/p50 against the pooled control's.
    const control = latencySummary(controlRuns.flatMap((r) => r.latencies), 3);
    const controlFailures = controlRuns.reduce((n, r) => n + r.failures, 0);
    const serviceRatio = p99 / p50;
    const tailOk = serviceRatio <= TAIL_FACTOR * control.ratio;
    const memoryOk = minuteGrowth < RSS_GROWTH_LIMIT;
    // Latency per kind of request: the mix spans ~1 ms reads and ~10 ms bookings, so the mix's own
    // p99/p50 also measures how unlike the kinds are; each kind's tail is read against its own median.
    const kindLines = [...byKind].sort(([a], [b]) => a.localeCompare(b)).map(([kind, xs]) => {
      xs.sort((a, b) => a - b);
      const k50 = pct(xs, 50);
      const k99 = pct(xs, 99);
      return { kind, n: xs.length, k50, k99, ratio: k99 / k50 };
    });
    const worstKind = Math.max(...kindLines.map((k) => k.ratio));
    const fiveHundreds = [...statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
    // Where the CPU went over the soak, in cores (seconds of CPU per second of soak).
    const wall = (cpuAfter.at - cpuBefore.at) / 1000;
    const cores = (a: number, b: number) => ((b - a) / wall).toFixed(2);
    const machineBusy = (cpuAfter.machineBusy - cpuBefore.machineBusy) / (cpuAfter.machineTotal - cpuBefore.machineTotal);
    // The service's own latency distribution over the soak (from its /metrics histogram).
    const bounds = [...histogramAfter.keys()].filter((k) => k !== '+Inf').map(Number).sort((a, b) => a - b);
    const cumulative = [...bounds.map(String), '+Inf'].map((k) => (histogramAfter.get(k) ?? 0) - (histogramBefore.get(k) ?? 0));
    const served = cumulative.at(-1) ?? 0;
    const over = (le: number) => (served ? (100 * (served - cumulative[bounds.indexOf(le)]!)) / served : NaN).toFixed(2);
    const lines = [
      `engine: ${databaseUrl ? 'PostgreSQL' : 'PGlite (embedded)'}; capacity ${capacity.toFixed(0)} req/s; soak ${SECONDS} s at ${rate} req/s; achieved ${soak.requests.average.toFixed(0)} req/s`,
      `requests: ${latencies.length}; statuses: ${[...statuses].sort(([a], [b]) => a - b).map(([s, c]) => `${s}×${c}`).join(' ')}`,
      `RSS (sampled every 5 s): start ${mb(rss[0]!.bytes)} MB, end ${mb(rss.at(-1)!.bytes)} MB, range ${mb(Math.min(...rss.map((x) => x.bytes)))}–${mb(peak(rss))} MB; mean ${mb(mean(early))} MB at 10–30 % of the run, ${mb(mean(late))} MB in the last 20 %: growth ${(growth * 100).toFixed(1)} %; peaks ${mb(peak(early))} → ${mb(peak(late))} MB (${(peakGrowth * 100).toFixed(1)} %); slope after warm-up ${((slope * 60) / 1048576).toFixed(2)} MB/min`,
      `latency, whole mix: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, p99/p50 ${(p99 / p50).toFixed(2)}× (judged against the control below)`,
      ...kindLines.map((k) => `latency, ${k.kind} (${k.n}): p50 ${k.k50.toFixed(1)} ms, p99 ${k.k99.toFixed(1)} ms, p99/p50 ${k.ratio.toFixed(2)}×`),
      `CPU over the soak, in cores of ${os.availableParallelism()}: service ${cores(cpuBefore.service, cpuAfter.service)}, PostgreSQL ${cores(cpuBefore.postgres, cpuAfter.postgres)}, load generator ${cores(cpuBefore.generator, cpuAfter.generator)}; machine busy ${(machineBusy * 100).toFixed(0)} %`,
      `service-side latency (its /metrics histogram, receipt to response; ${served} requests): p50 ${(histogramPercentile(bounds, cumulative, 50) * 1000).toFixed(1)} ms, p99 ${(histogramPercentile(bounds, cumulative, 99) * 1000).toFixed(1)} ms (interpolated in buckets); over 25 ms ${over(0.025)} %, over 50 ms ${over(0.05)} %, over 100 ms ${over(0.1)} %; the generator saw over 25 ms ${((100 * latencies.filter((x) => x > 25).length) / latencies.length).toFixed(2)} %, over 50 ms ${((100 * latencies.filter((x) => x > 50).length) / latencies.length).toFixed(2)} %`,
      `load generator's own lag in handing requests over (included in the latencies): p50 ${pct(issueLags.sort((a, b) => a - b), 50).toFixed(1)} ms, p99 ${pct(issueLags, 99).toFixed(1)} ms`,
      `service event-loop delay over the soak (one API process; prom-client's figures include its 10 ms sampling interval): ${['p50', 'p99', 'max'].map((q) => `${q} ${((serviceMetrics.get(`eventloop_lag_${q}_seconds`) ?? NaN) * 1000).toFixed(1)} ms`).join(', ')}; GC ${(['minor', 'major'] as const).map((k) => {
        const n = (serviceMetrics.get(`gc_duration_seconds_count{kind="${k}"}`) ?? 0) - (gcBefore.get(`gc_duration_seconds_count{kind="${k}"}`) ?? 0);
        const sum = (serviceMetrics.get(`gc_duration_seconds_sum{kind="${k}"}`) ?? 0) - (gcBefore.get(`gc_duration_seconds_sum{kind="${k}"}`) ?? 0);
        return `${k} ${n}× (${(sum * 1000).toFixed(0)} ms)`;
      }).join(', ')}`,
    ];
    process.stdout.write(`\n${lines.join('\n')}\n`);
    process.stdout.write(`worst per-kind p99/p50: ${worstKind.toFixed(2)}×\n`);
    const verdict = [
      `control (bare Fastify, fixed work; ${controlRuns.map((r) => `${r.rate} req/s`).join(' then ')}; ${controlRuns.reduce((n, r) => n + r.latencies.length, 0)} requests, not 200: ${controlFailures}): p50 ${control.p50.toFixed(2)} ms, p99 ${control.p99.toFixed(2)} ms, p99/p50 ${control.ratio.toFixed(2)}×`,
      `tail: service p99/p50 ${serviceRatio.toFixed(2)}× against the control's ${control.ratio.toFixed(2)}×: ${(serviceRatio / control.ratio).toFixed(2)}× the control (target ≤ ${TAIL_FACTOR}×): ${tailOk ? 'PASS' : 'FAIL'}`,
      `memory: RSS ${mb(mean(firstMinute))} MB in the first ${edge.toFixed(0)} s, ${mb(mean(lastMinute))} MB in the last ${edge.toFixed(0)} s: growth ${(minuteGrowth * 100).toFixed(1)} % (target < ${RSS_GROWTH_LIMIT * 100} %): ${memoryOk ? 'PASS' : 'FAIL'}`,
      `errors: ${fiveHundreds} responses with 5xx (target 0): ${fiveHundreds === 0 ? 'PASS' : 'FAIL'}`,
    ];
    process.stdout.write(`\nverdict\n${verdict.join('\n')}\n`);
    const failed = !tailOk || !memoryOk || fiveHundreds > 0 || controlFailures > 0;
    process.stdout.write(`soak: ${failed ? 'FAIL' : 'PASS'}\n`);
    if (failed && STRICT) process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

await main();
