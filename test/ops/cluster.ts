/**
 * Real service processes for the operations tests: `node bin/carebook.mjs serve|worker` as child
 * processes, a fresh PostgreSQL database per test, and a small HTTP client.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { schedulingDirectory } from '../appointments/fixtures.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const ADMIN_TOKEN = 'ops-admin-token';

export interface Proc {
  child: ChildProcess;
  url: string;
  output: () => string;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (graceful), and wait for the exit. */
  stop(): Promise<void>;
}

/** Starts `carebook <args>`; resolves when /readyz answers 200 (serve) or the workers have started (worker). */
export async function startCarebook(args: string[], env: Record<string, string>, opts: { port?: number; timeoutMs?: number } = {}): Promise<Proc> {
  let out = '';
  const child = spawn(process.execPath, ['bin/carebook.mjs', ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ADMIN_TOKEN,
      RATE_LIMIT_PER_MINUTE: '1000000',
      WORKER_POLL_MS: '50',
      WEBHOOK_RETRY_BASE_MS: '100',
      SHUTDOWN_GRACE_SECONDS: '2',
      ...(opts.port ? { PORT: String(opts.port) } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (out += String(d)));
  const exited = once(child, 'exit');
  const proc: Proc = {
    child,
    url: opts.port ? `http://127.0.0.1:${opts.port}` : '',
    output: () => out,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`carebook ${args.join(' ')} exited early:\n${out.slice(-3000)}`);
    if (Date.now() > deadline) {
      await proc.kill();
      throw new Error(`carebook ${args.join(' ')} did not become ready:\n${out.slice(-3000)}`);
    }
    if (args[0] === 'worker') {
      if (out.includes('background workers started')) return proc;
    } else {
      const ready = await http('GET', `${proc.url}/readyz`).catch(() => undefined);
      if (ready?.status === 200) return proc;
    }
    await sleep(100);
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json<T = any>(): T; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** One HTTP request with a fresh connection (so a killed server cannot leave a stale keep-alive socket behind). */
export function http(method: string, url: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 15_000): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      url,
      {
        method,
        agent: false,
        headers: { ...(payload ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } : {}), ...headers },
        timeout: timeoutMs,
      },
      (res) => {
        let raw = '';
        res.on('data', (d) => (raw += String(d)));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: raw, json: () => JSON.parse(raw) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(payload);
  });
}

/** A fresh PostgreSQL database on the server of `baseUrl` (TEST_DATABASE_URL); drop() removes it. */
export async function freshPgDatabase(baseUrl: string, prefix = 'carebook_ops'): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
      await c.end();
    },
  };
}

export interface Tenant {
  developerId: string;
  clientId: string;
  clientSecret: string;
  token: string;
}

/**
 * Onboards a developer through the admin API, loads the scheduling test directory into its
 * directory, points its webhooks at `webhookUrl`, and gets a client-credentials token. `adminToken`:
 * a production service's own (production wants at least 32 characters).
 */
export async function onboard(base: string, audience: string, webhookUrl?: string, webhookKey?: string, adminToken = ADMIN_TOKEN): Promise<Tenant> {
  const admin = { authorization: `Bearer ${adminToken}` };
  const dev = await http('POST', `${base}/admin/v1/developers`, { name: 'Ops developer' }, admin);
  if (dev.status !== 201) throw new Error(`developer create: ${dev.status} ${dev.body}`);
  const d = dev.json<{ developer_id: string; client_id: string; client_secret: string }>();
  const imported = await http('POST', `${base}/admin/v1/directory/import?developer_id=${d.developer_id}`, schedulingDirectory(), admin, 60_000);
  if (imported.status !== 200) throw new Error(`directory import: ${imported.status} ${imported.body}`);
  if (webhookUrl) {
    const set = await http('PUT', `${base}/admin/v1/developers/${d.developer_id}/webhook`, { url: webhookUrl, key: webhookKey }, admin);
    if (set.status !== 200) throw new Error(`webhook set: ${set.status} ${set.body}`);
  }
  return { developerId: d.developer_id, clientId: d.client_id, clientSecret: d.client_secret, token: await token(base, audience, d.client_id, d.client_secret) };
}

export async function token(base: string, audience: string, clientId: string, clientSecret: string): Promise<string> {
  const res = await http('POST', `${base}/auth/oauth/token`, { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, audience });
  if (res.status !== 200) throw new Error(`token: ${res.status} ${res.body}`);
  return res.json<{ access_token: string }>().access_token;
}

/** Bookable start times of a provider-location on a day, through the API. */
export async function freeSlots(base: string, tokenValue: string, pl: string, date: string, visitReasonId = 'pc_t30'): Promise<string[]> {
  const q = new URLSearchParams({ provider_location_ids: pl, visit_reason_id: visitReasonId, patient_type: 'new', start_date_in_provider_local_time: date, end_date_in_provider_local_time: date });
  const res = await http('GET', `${base}/v1/provider_locations/availability?${q}`, undefined, { authorization: `Bearer ${tokenValue}` });
  if (res.status !== 200) throw new Error(`availability: ${res.status} ${res.body}`);
  return res.json<{ data: { timeslots: { start_time: string }[] }[] }>().data[0]!.timeslots.map((s) => s.start_time);
}
