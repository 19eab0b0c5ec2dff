/**
 * Read replicas (issue #20 §8; docs/performance.md, "Read replicas (issue #20 §8)"): two production
 * API processes on a private PostgreSQL primary, with and without its streaming replica
 * (`DATABASE_REPLICA_URL`), under autocannon.
 *
 * The primary and its `pg_basebackup -R` hot standby run on this machine as the ops test starts them
 * (test/ops/replica-pair.ts; ports `BENCH_PRIMARY_PORT`/`BENCH_REPLICA_PORT`, default 25432/25433).
 * The API processes are children of this script, each started as `carebook serve` starts it
 * (`startService`; the first with the background jobs, the second without, as `serve --no-workers`).
 * One autocannon instance drives both, its connections split evenly between the two (autocannon's
 * own round-robin over several URLs), so req/s, p50 and p99 are over every request of both.
 *
 * Scenarios, each measured `BENCH_ROUNDS` times (default 3) per configuration, the order of the
 * configurations flipping every round, `BENCH_SECONDS` (default 8) each at `BENCH_CONNECTIONS`
 * (default 20):
 * - `directory`: `GET /v1/schedulable_entities?page_size=100` on a seeded directory of
 *   `BENCH_PROVIDERS` (default 2,000) providers;
 * - `availability`: `GET /v1/provider_locations/availability` for one provider-location, 8 days;
 * - `availability-1`: the same at one connection (one process, alternating by round): the statements'
 *   own latency, without contention;
 * - `booking`: `POST /v1/appointments`, each request a different free slot of three other providers,
 *   after all the reads (the slots it books are gone), four runs of `BENCH_BOOKING_SECONDS` (default
 *   4) in the order primary only, with replica, with replica, primary only, the evaluator left to
 *   settle each run's bookings before its processes stop;
 * - `bare`: two bare Fastify processes answering `GET /bare` with a small JSON object, driven the
 *   same way, measured in the same run: what the host and the client manage without the service.
 *
 * Prints the table and writes it as the "Read replicas (issue #20 §8)" section of bench/results.md
 * (`npm run bench` keeps that section). `node --import tsx bench/replica.ts`
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

const say = (s: string) => process.stdout.write(`${s}\n`);
const num = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
const ROUNDS = num('BENCH_ROUNDS', 3);
const SECONDS = num('BENCH_SECONDS', 8);
const CONNECTIONS = num('BENCH_CONNECTIONS', 20);
const PROVIDERS = num('BENCH_PROVIDERS', 2000);
const BOOKING_SECONDS = num('BENCH_BOOKING_SECONDS', 4);
const SECTION = '## Read replicas (issue #20 §8)';

/** Child: the service as `serve` starts it, from this process's environment. */
async function childService(): Promise<void> {
  const { loadConfig } = await import('../src/config.js');
  const { startService } = await import('../src/server.js');
  const config = loadConfig(process.env);
  const service = await startService(config, { quiet: true, workers: process.env.BENCH_WORKERS !== '0' });
  process.stdout.write(`READY ${service.url}\n`);
  process.once('SIGTERM', () => void service.close().then(() => process.exit(0)));
}

/** Child: the bare baseline, Fastify with one route. */
async function childBare(): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false, forceCloseConnections: true });
  app.get('/bare', async () => ({ ok: true, request_id: 'bare' }));
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
  process.stdout.write(`READY http://127.0.0.1:${process.env.PORT}\n`);
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

interface Child {
  url: string;
  stop(): Promise<void>;
}

async function startChild(mode: 'service' | 'bare', env: Record<string, string>): Promise<Child> {
  const proc: ChildProcess = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, mode], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout! });
    lines.on('line', (l) => l.startsWith('READY ') && resolve(l.slice(6)));
    proc.once('exit', (code) => reject(new Error(`${mode} child exited with ${code}`)));
  });
  return {
    url,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

interface Measured {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** The non-2xx answers by status (`409×3`), and transport errors. */
  failures: string;
}

async function measure(urls: string[], opts: Partial<autocannon.Options> = {}, seconds = SECONDS): Promise<Measured> {
  const r = await autocannon({ url: urls as unknown as string, connections: CONNECTIONS, duration: seconds, ...opts } as autocannon.Options);
  const codes = Object.entries((r as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {});
  const failures = [...codes.filter(([c]) => !c.startsWith('2')).map(([c, v]) => `${c}×${v.count}`), ...(r.errors ? [`err×${r.errors}`] : [])].join(' ');
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors, failures };
}

async function http(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: () => any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await fetch(url, { method, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers }, ...(body ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  return { status: res.status, json: () => JSON.parse(text) };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const { startReplicaPair } = await import('../test/ops/replica-pair.js');
  const { createBody, PL, schedulingDirectory, nyDate } = await import('../test/appointments/fixtures.js');
  const pair = await startReplicaPair(num('BENCH_PRIMARY_PORT', 25432), num('BENCH_REPLICA_PORT', 25433));
  const dataDir = await mkdtemp(join(tmpdir(), 'carebook-replica-bench-'));
  const ports = [num('BENCH_API_PORT', 25480), num('BENCH_API_PORT', 25480) + 1];
  const admin = `bench-admin-${randomBytes(16).toString('hex')}`;
  const base = {
    APP_ENV: 'production',
    ADMIN_TOKEN: admin,
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    DATABASE_URL: pair.primaryUrl,
    PUBLIC_BASE_URL: `http://127.0.0.1:${ports[0]}`,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '10000000',
    MAX_CONNECTIONS_PER_ADDRESS: '0',
  };
  const children: Child[] = [];
  const startApis = async (replica: boolean): Promise<Child[]> => {
    const env = { ...base, ...(replica ? { DATABASE_REPLICA_URL: pair.replicaUrl } : {}) };
    const apis = [await startChild('service', { ...env, PORT: String(ports[0]) }), await startChild('service', { ...env, PORT: String(ports[1]), BENCH_WORKERS: '0' })];
    children.push(...apis);
    if (replica) {
      const deadline = Date.now() + 30_000;
      while ((await Promise.all(apis.map(async (a) => (await http('GET', `${a.url}/readyz`)).json().replica))).some((s) => s !== 'ok')) {
        if (Date.now() > deadline) throw new Error('the replica never became usable');
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return apis;
  };
  const stopAll = async (list: Child[]) => {
    await Promise.all(list.map((c) => c.stop()));
    for (const c of list) children.splice(children.indexOf(c), 1);
  };

  try {
    // The data: one developer with the scheduling test directory (availability, bookings) and a seeded directory.
    say(`seeding ${PROVIDERS} providers…`);
    let apis = await startApis(false);
    const auth = { authorization: `Bearer ${admin}` };
    const dev = (await http('POST', `${apis[0]!.url}/admin/v1/developers`, { name: 'Replica bench' }, auth)).json();
    const imported = await http('POST', `${apis[0]!.url}/admin/v1/directory/import?developer_id=${dev.developer_id}`, schedulingDirectory(), auth);
    if (imported.status !== 200) throw new Error(`import: ${imported.status}`);
    const seeded = await http('POST', `${apis[0]!.url}/admin/v1/directory/seed`, { providers: PROVIDERS, seed: 7, developer_id: dev.developer_id }, auth);
    if (seeded.status >= 300) throw new Error(`seed: ${seeded.status}`);
    await pair.onPrimary('ANALYZE');
    const token = (await http('POST', `${apis[0]!.url}/auth/oauth/token`, { grant_type: 'client_credentials', client_id: dev.client_id, client_secret: dev.client_secret, audience: `${base.PUBLIC_BASE_URL}/` })).json().access_token as string;
    const headers = { authorization: `Bearer ${token}` };
    // Free slots for the booking runs: three providers (not the availability scenario's), 93 days,
    // split between the four runs.
    const slots: { pl: string; start: string }[] = [];
    for (const pl of [PL.ny2, PL.phx, PL.hnl]) {
      for (const first of [1, 32, 63]) {
        const q = new URLSearchParams({ provider_location_ids: pl, visit_reason_id: 'pc_t30', patient_type: 'new', start_date_in_provider_local_time: nyDate(first), end_date_in_provider_local_time: nyDate(first + 30) });
        const r = (await http('GET', `${apis[0]!.url}/v1/provider_locations/availability?${q}`, undefined, headers)).json();
        for (const s of r.data[0].timeslots as { start_time: string }[]) slots.push({ pl, start: s.start_time });
      }
    }
    await stopAll(apis);
    say(`${slots.length} free slots for the booking runs`);

    const paths = {
      directory: '/v1/schedulable_entities?page_size=100',
      availability: `/v1/provider_locations/availability?provider_location_ids=${encodeURIComponent(PL.ny)}&visit_reason_id=pc_t30&patient_type=new`,
    };
    type Config = 'primary only' | 'with replica';
    const runs: Record<string, Measured[]> = {};
    const record = (key: string, m: Measured) => {
      (runs[key] ??= []).push(m);
      say(`${key}: ${m.rps} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms${m.failures ? `, ${m.failures}` : ''}`);
    };
    let bookingSlice = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order: Config[] = round % 2 ? ['with replica', 'primary only'] : ['primary only', 'with replica'];
      for (const config of order) {
        apis = await startApis(config === 'with replica');
        const urls = apis.map((a) => a.url);
        for (const [name, path] of Object.entries(paths)) {
          await measure(urls.map((u) => u + path), { headers }, 2); // warm-up
          record(`${name}|${config}`, await measure(urls.map((u) => u + path), { headers }));
        }
        // One request at a time: the latency of the statements themselves, without contention.
        record(`availability-1|${config}`, await measure([urls[round % 2]! + paths.availability], { headers, connections: 1 }));
        await stopAll(apis);
      }
      const bare = [await startChild('bare', { PORT: String(ports[0]) }), await startChild('bare', { PORT: String(ports[1]) })];
      children.push(...bare);
      record('bare|bare', await measure(bare.map((b) => `${b.url}/bare`)));
      await stopAll(bare);
    }

    // Bookings, after every read (the slots they take would change the availability answers), on
    // other providers than the availability scenario's; each run lets the evaluator settle its
    // bookings before the processes stop, so the next run does not inherit its backlog.
    for (const config of ['primary only', 'with replica', 'with replica', 'primary only'] as Config[]) {
      apis = await startApis(config === 'with replica');
      const mine = slots.filter((_, i) => i % 4 === bookingSlice);
      bookingSlice++;
      let next = 0;
      const requests = [
        {
          method: 'POST' as const,
          setupRequest: (req: Record<string, unknown>) => {
            const s = mine[next++ % mine.length]!;
            return { ...req, body: JSON.stringify(createBody(s.pl, s.start, {}, { developer_patient_id: `bench-${next}` })) };
          },
        },
      ];
      record(
        `booking|${config}`,
        await measure(apis.map((a) => `${a.url}/v1/appointments`), { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, requests } as unknown as Partial<autocannon.Options>, BOOKING_SECONDS),
      );
      const deadline = Date.now() + 120_000;
      while ((await pair.onPrimary<{ n: number }>(`SELECT count(*)::int AS n FROM appointments WHERE appointment_status = 'pending_booking'`))[0]!.n > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 500));
      }
      await stopAll(apis);
    }

    const row = (key: string, label: string) => {
      const ms = runs[key] ?? [];
      const bareRps = median((runs['bare|bare'] ?? []).map((m) => m.rps));
      const rps = median(ms.map((m) => m.rps));
      const failures = ms.map((m) => m.failures).filter(Boolean).join(' ') || '0';
      return `| ${label} | ${rps.toLocaleString('en-US')} | ${median(ms.map((m) => m.p50))} | ${median(ms.map((m) => m.p99))} | ${(rps / bareRps).toFixed(3)} | ${failures} |`;
    };
    const lines = [
      SECTION,
      '',
      `_Written by \`node --import tsx bench/replica.ts\` (this run: ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}, ${SECONDS} s per measurement at ${CONNECTIONS} connections split between the two API processes; a private primary and its streaming replica on this machine), not by \`npm run bench\`, which keeps this section; what it measures: docs/performance.md, "Read replicas (issue #20 §8)"._`,
      '',
      `${new Date().toISOString().slice(0, 10)} · Node ${process.version} · two shared cores for everything: primary, standby, both API processes and autocannon · ${PROVIDERS.toLocaleString('en-US')} seeded providers · medians over ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}; booking: medians of two ${BOOKING_SECONDS} s runs per configuration, each request a distinct free slot; the standby runs (and replays every write) in both configurations, only the API processes' \`DATABASE_REPLICA_URL\` differs.`,
      '',
      '| scenario | req/s | p50 ms | p99 ms | req/s ÷ bare | non-2xx (all runs) |',
      '|---|---:|---:|---:|---:|---:|',
      row('bare|bare', 'bare Fastify, two processes'),
      row('directory|primary only', '`schedulable_entities?page_size=100`, primary only'),
      row('directory|with replica', '`schedulable_entities?page_size=100`, with replica'),
      row('availability|primary only', 'availability, 1 provider-location × 8 days, primary only'),
      row('availability|with replica', 'availability, 1 provider-location × 8 days, with replica'),
      row('availability-1|primary only', 'availability at 1 connection, primary only'),
      row('availability-1|with replica', 'availability at 1 connection, with replica'),
      row('booking|primary only', '`POST /v1/appointments`, primary only'),
      row('booking|with replica', '`POST /v1/appointments`, with replica'),
      '',
    ];
    const section = lines.join('\n');
    say(`\n${section}`);
    const file = join(import.meta.dirname, 'results.md');
    const old = await readFile(file, 'utf8');
    const parts = old.split(/^(?=## )/m);
    const at = parts.findIndex((p) => p.startsWith(`${SECTION}\n`));
    if (at >= 0) parts[at] = `${section}\n`;
    else parts.push(`${old.endsWith('\n\n') ? '' : '\n'}${section}`);
    await writeFile(file, parts.join(''));
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await pair.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const mode = process.argv[2];
await (mode === 'service' ? childService() : mode === 'bare' ? childBare() : main());
