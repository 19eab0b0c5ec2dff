/**
 * How long `/healthz` waits while one ~10 MB attachment is uploaded and then downloaded
 * (docs/performance.md, "Attachments on the embedded engine (issue #20 §5)").
 *
 * The service runs in a child process, started as `carebook serve` starts it (`startService`): on
 * embedded PGlite in a new temporary `DATA_DIR`, or on PostgreSQL with `BENCH_DATABASE_URL` (a
 * fresh schema, dropped at the end). This process is only the client: it books an appointment, then
 * sends GET /healthz every `POLL_MS` (20 ms, each on its own schedule, never waiting for the
 * previous answer) while it uploads one ~10 MB PDF (random bytes after a PDF header, so nothing
 * compresses) and while it downloads it again, and prints p50/p99/max of the healthz answers that
 * started during each phase; and, as the control, during a second of nothing else (`idle`).
 * The polls go out from a worker thread (bench/healthz-poller-worker.mjs), as a separate health checker's
 * would, unless `BENCH_POLLER=main` (see `POLLER`).
 * `BENCH_CHILD_FLAGS`: Node flags for the service (e.g. `--cpu-prof`); its other output goes to stderr.
 *
 * `node --import tsx bench/attachment-stall.ts` (`BENCH_ATTACHMENT_MB`, default 9.5; `BENCH_ROUNDS`, default 5)
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';

const POLL_MS = 20;
const say = (s: string) => process.stdout.write(`${s}\n`);

interface Ready {
  url: string;
  clientId: string;
  clientSecret: string;
  audience: string;
}

/** The child: the service as `serve` starts it, plus one developer with a small bookable directory. */
async function child(): Promise<void> {
  const { loadConfig } = await import('../src/config.js');
  const { openDatabase } = await import('../src/db/database.js');
  const { startService } = await import('../src/server.js');
  const { createDeveloper } = await import('../src/domain/developers/create-developer.js');
  const { writeDirectory } = await import('../src/domain/directory/write/write-directory.js');
  const { schedulingDirectory } = await import('../test/appointments/fixtures.js');
  const config = loadConfig({
    PORT: process.env.PORT,
    DATA_DIR: process.env.DATA_DIR,
    DATABASE_URL: process.env.DATABASE_URL,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '10000000',
    MAX_CONNECTIONS_PER_ADDRESS: '0',
    KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  });
  const schema = process.env.BENCH_SCHEMA;
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...(schema ? { schema } : {}) });
  const service = await startService(config, { handle, quiet: true });
  const dev = await createDeveloper(handle.db, { env: 'sandbox', name: 'attachment bench' });
  await handle.db.transaction().execute((trx) => writeDirectory(trx, 'sandbox', schedulingDirectory(), { developerId: dev.developer_id }));
  const ready: Ready = { url: service.url, clientId: dev.client_id, clientSecret: dev.client_secret, audience: config.audience };
  process.stdout.write(`READY ${JSON.stringify(ready)}\n`);
  process.on('SIGTERM', () => void service.close().then(() => handle.close()).then(() => process.exit(0)));
}

const agent = new Agent({ keepAlive: true, maxSockets: 2000 });

/** One GET /healthz: its latency in ms. */
function healthz(base: URL): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, path: '/healthz', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - t0));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Where the polls are sent from: `thread` (default), a worker thread of this process with its own
 * event loop, as a separate health checker would poll; `main`, this process's main thread, which also
 * encodes, sends and reads back the 10 MB, so its own stalls count in the latencies (the figures
 * before 2026-12-07 were measured this way). `BENCH_POLLER=main|thread`.
 */
const POLLER = process.env.BENCH_POLLER === 'main' ? 'main' : 'thread';
let pollerWorker: Worker | undefined;

/** Polls `base`/healthz every POLL_MS until the returned function is called; it answers the latencies. */
function startPolling(base: URL): () => Promise<number[]> {
  if (POLLER === 'main') {
    const pending: Promise<number>[] = [healthz(base)];
    const timer = setInterval(() => pending.push(healthz(base)), POLL_MS);
    return () => {
      clearInterval(timer);
      return Promise.all(pending);
    };
  }
  const worker = (pollerWorker ??= new Worker(join(import.meta.dirname, 'healthz-poller-worker.mjs')));
  worker.postMessage({ start: new URL('/healthz', base).href, everyMs: POLL_MS });
  return () =>
    new Promise((resolve, reject) => {
      worker.once('message', (m: { latencies?: number[]; error?: string }) => (m.latencies ? resolve(m.latencies) : reject(new Error(m.error))));
      worker.postMessage({ stop: true });
    });
}

/** Runs `work` while polling /healthz every POLL_MS; the latencies of the polls started meanwhile. */
async function polled<T>(base: URL, work: () => Promise<T>): Promise<{ result: T; ms: number; latencies: number[] }> {
  const stop = startPolling(base);
  const t0 = performance.now();
  try {
    const result = await work();
    const ms = performance.now() - t0;
    return { result, ms, latencies: await stop() };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

function stats(xs: number[]): { n: number; p50: number; p99: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { n: s.length, p50: at(0.5), p99: at(0.99), max: s.at(-1)! };
}

async function api<T>(base: string, path: string, init: RequestInit & { token?: string } = {}): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    ...init,
    headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.body && typeof init.body === 'string' ? { 'content-type': 'application/json' } : {}), ...init.headers },
  });
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  return (await res.json()) as T;
}

async function parent(): Promise<void> {
  const { createBody, nyDate, PL } = await import('../test/appointments/fixtures.js');
  const url = process.env.BENCH_DATABASE_URL;
  const mb = Number(process.env.BENCH_ATTACHMENT_MB ?? 9.5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const dataDir = await mkdtemp(join(tmpdir(), 'carebook-attachment-bench-'));
  const schema = `bench_attach_${randomBytes(4).toString('hex')}`;
  const pg = url ? new (await import('pg')).default.Client({ connectionString: url }) : undefined;
  if (pg) {
    await pg.connect();
    await pg.query('CREATE EXTENSION IF NOT EXISTS btree_gist');
    await pg.query(`CREATE SCHEMA "${schema}"`);
  }
  const port = 24000 + (process.pid % 1000);
  const proc = spawn(process.execPath, [...(process.env.BENCH_CHILD_FLAGS ?? '').split(' ').filter(Boolean), '--import', 'tsx', import.meta.filename, 'child'], {
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: url ?? '', BENCH_SCHEMA: url ? schema : '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const ready = await new Promise<Ready>((resolve, reject) => {
      proc.on('exit', (code) => reject(new Error(`the service exited (${code})`)));
      createInterface({ input: proc.stdout! }).on('line', (line) => {
        if (line.startsWith('READY ')) resolve(JSON.parse(line.slice(6)) as Ready);
        else process.stderr.write(`[service] ${line}\n`);
      });
    });
    const base = ready.url;
    const { access_token: token } = await api<{ access_token: string }>(base, '/auth/oauth/token', {
      method: 'POST',
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: ready.clientId, client_secret: ready.clientSecret, audience: ready.audience }),
    });
    const q = new URLSearchParams({ provider_location_ids: PL.ny, visit_reason_id: 'pc_t30', patient_type: 'new', start_date_in_provider_local_time: nyDate(3), end_date_in_provider_local_time: nyDate(3) });
    const slots = (await api<{ data: { timeslots: { start_time: string }[] }[] }>(base, `/v1/provider_locations/availability?${q}`, { token })).data[0]!.timeslots;
    const appointmentId = (await api<{ data: { appointment_id: string } }>(base, '/v1/appointments', { method: 'POST', token, body: JSON.stringify(createBody(PL.ny, slots[0]!.start_time)) })).data.appointment_id;
    // A PDF by its header; random bytes after it, as a real PDF's compressed streams are.
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(Math.round(mb * 1024 * 1024) - 16), Buffer.from('\n%%EOF\n')]);
    // Warm-up: the first requests of a process compile its code paths.
    for (let i = 0; i < 20; i++) await healthz(new URL(base));

    say(`Attachment stall: ${url ? `PostgreSQL (${new URL(url).host})` : 'embedded PGlite (DATA_DIR on disk)'}, ${(pdf.length / 1e6).toFixed(1)} MB PDF, GET /healthz every ${POLL_MS} ms from ${POLLER === 'thread' ? 'a worker thread (its own event loop)' : 'the uploading thread'}, ${rounds} rounds`);
    say('| round | phase | phase ms | healthz n | p50 ms | p99 ms | max ms |');
    say('|---|---|---|---|---|---|---|');
    const all: Record<'idle' | 'upload' | 'download', number[]> = { idle: [], upload: [], download: [] };
    for (let round = 1; round <= rounds; round++) {
      // The control: the same polling for a second with nothing else going on.
      const idle = await polled(new URL(base), () => new Promise((r) => setTimeout(r, 1000)));
      const up = await polled(new URL(base), async () => {
        const form = new FormData();
        form.append('attachment_type', 'pcp_patient_referral');
        form.append('attachment', new Blob([pdf], { type: 'application/pdf' }), 'referral.pdf');
        return api<{ data: { attachments: { attachment_url: string; size_bytes: number }[] } }>(base, `/v1/appointments/${appointmentId}/attachments`, { method: 'POST', token, body: form });
      });
      const attachment = up.result.data.attachments.at(-1)!;
      const down = await polled(new URL(base), async () => {
        const res = await fetch(attachment.attachment_url, { headers: { authorization: `Bearer ${token}` } });
        const body = Buffer.from(await res.arrayBuffer());
        if (res.status !== 200 || !body.equals(pdf)) throw new Error(`download: ${res.status}, ${body.length} bytes, ${body.equals(pdf) ? 'same' : 'different'} bytes`);
      });
      for (const [phase, r] of [['idle', idle], ['upload', up], ['download', down]] as const) {
        const s = stats(r.latencies);
        all[phase].push(...r.latencies);
        say(`| ${round} | ${phase} | ${r.ms.toFixed(0)} | ${s.n} | ${s.p50.toFixed(1)} | ${s.p99.toFixed(1)} | ${s.max.toFixed(1)} |`);
      }
    }
    for (const phase of ['idle', 'upload', 'download'] as const) {
      const s = stats(all[phase]);
      say(`| all | ${phase} | | ${s.n} | ${s.p50.toFixed(1)} | ${s.p99.toFixed(1)} | ${s.max.toFixed(1)} |`);
    }
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    agent.destroy();
    await pollerWorker?.terminate();
    await rm(dataDir, { recursive: true, force: true });
    if (pg) {
      await pg.query(`DROP SCHEMA "${schema}" CASCADE`);
      await pg.end();
    }
  }
}

if (process.argv[2] === 'child') await child();
else await parent();
