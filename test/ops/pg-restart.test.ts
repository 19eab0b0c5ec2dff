/**
 * Faults (issue #6 §3): PostgreSQL stopped and restarted under load. Meanwhile the API answers 503
 * with the error body and Retry-After (never a hang, never a 500 or 401), `/readyz` is 503 and
 * `/healthz` 200; afterwards it recovers by itself, without restarting the service.
 *
 * Runs a private PostgreSQL cluster (Debian's binaries, as the `postgres` user) so that the machine's
 * shared server is never stopped.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBody, nyDate, PL } from '../appointments/fixtures.js';
import { testPort } from '../helpers/app.js';
import { freeSlots, http, onboard, sleep, startCarebook, type Proc, type Tenant } from './cluster.js';
import { canRunReplicaPair, isRoot, pgBinCommand } from './replica-pair.js';

const canRun = canRunReplicaPair;

/** Runs a PostgreSQL binary, as the `postgres` user when we are root (PostgreSQL refuses to run as root). */
function pgBin(cmd: string, args: string[]): string {
  const [file, argv] = pgBinCommand(cmd, args);
  return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
}

/** `pgBin` without blocking the event loop: the test's load keeps running while the server stops and starts. */
async function pgBinAsync(cmd: string, args: string[]): Promise<string> {
  const [file, argv] = pgBinCommand(cmd, args);
  return (await promisify(execFile)(file, argv, { encoding: 'utf8', timeout: 60_000 })).stdout;
}

describe.runIf(canRun)('PostgreSQL stopped and restarted under load (private cluster; needs PostgreSQL server binaries in /usr/lib/postgresql/*/bin)', () => {
  let dir: string;
  let pgPort: number;
  let svc: Proc | undefined;
  let tenant: Tenant;
  const ctlArgs = (action: 'start' | 'stop') =>
    ['-D', join(dir, 'data'), '-l', join(dir, 'postgres.log'), '-w', '-t', '60', ...(action === 'stop' ? ['-m', 'fast'] : ['-o', `-p ${pgPort} -k ${dir} -c listen_addresses=127.0.0.1`]), action];
  const ctl = (action: 'start' | 'stop') => pgBin('pg_ctl', ctlArgs(action));
  const ctlAsync = (action: 'start' | 'stop') => pgBinAsync('pg_ctl', ctlArgs(action));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'carebook-pg-'));
    await chmod(dir, 0o777);
    if (isRoot) execFileSync('chown', ['postgres', dir]);
    pgPort = testPort();
    pgBin('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    ctl('start');
    const port = testPort();
    svc = await startCarebook(['serve'], { DATABASE_URL: `postgres://postgres@127.0.0.1:${pgPort}/postgres`, DATA_DIR: join(dir, 'carebook') }, { port, timeoutMs: 120_000 });
    tenant = await onboard(svc.url, `http://127.0.0.1:${port}/`);
  }, 180_000);

  afterAll(async () => {
    await svc?.stop();
    try {
      ctl('stop');
    } catch {
      // already stopped
    }
    await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it('answers 503 with the error body while the database is down and recovers without a restart', async () => {
    const base = svc!.url;
    const auth = { authorization: `Bearer ${tenant.token}` };
    const slotsAhead = await freeSlots(base, tenant.token, PL.ny, nyDate(3));
    let phase: 'up' | 'stopping' | 'down' | 'starting' | 'recovering' | 'recovered' = 'up';
    let stop = false;
    const seen: { phase: string; endPhase: string; status: number; body: string; retryAfter: unknown; requestId: unknown }[] = [];
    let booked = 0;
    const load = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const kind = (n + i) % 3;
        const startedIn = phase; // the phase when the request was sent
        const res = await (kind === 0
            ? http('GET', `${base}/v1/appointments?page_size=5`, undefined, auth, 10_000)
            : kind === 1
              ? http('GET', `${base}/v1/provider_locations/availability?provider_location_ids=${encodeURIComponent(PL.ny)}&visit_reason_id=pc_t30&patient_type=new`, undefined, auth, 10_000)
              : http('POST', `${base}/v1/appointments`, createBody(PL.ny, slotsAhead[(n * 7 + i) % slotsAhead.length]!, {}, { developer_patient_id: `pg-${n}-${i}` }), auth, 10_000)
        ).catch((e: Error) => ({ status: 0, body: `client error: ${e.message}`, headers: {} as Record<string, unknown> }));
        if (kind === 2 && res.status < 300) booked++;
        seen.push({ phase: startedIn, endPhase: phase, status: res.status, body: res.body, retryAfter: res.headers['retry-after'], requestId: res.headers['x-request-id'] });
        await sleep(20);
      }
    };
    const loops = Array.from({ length: 4 }, (_, n) => load(n));
    await sleep(1500);

    // The load goes on while the server shuts down and starts again (pg_ctl runs asynchronously).
    phase = 'stopping';
    await ctlAsync('stop');
    phase = 'down';
    await sleep(3000);
    expect(svc!.child.exitCode, svc!.output().slice(-3000)).toBeNull();
    const ready = await http('GET', `${base}/readyz`);
    const healthy = await http('GET', `${base}/healthz`);
    expect(ready.status).toBe(503);
    expect(healthy.status).toBe(200);
    // A fresh token cannot be issued either: 503 too.
    const tokenRes = await http('POST', `${base}/auth/oauth/token`, { grant_type: 'client_credentials', client_id: tenant.clientId, client_secret: tenant.clientSecret, audience: `${base}/` });
    expect(tokenRes.status).toBe(503);

    phase = 'starting';
    await ctlAsync('start');
    phase = 'recovering';
    const deadline = Date.now() + 30_000;
    while ((await http('GET', `${base}/v1/appointments?page_size=1`, undefined, auth)).status !== 200) {
      if (Date.now() > deadline) throw new Error('no recovery within 30 s');
      await sleep(200);
    }
    phase = 'recovered';
    await sleep(2000);
    stop = true;
    await Promise.all(loops);

    const unexpected = seen.filter((s) => ![200, 201, 409, 503].includes(s.status));
    expect(unexpected.map((s) => `${s.phase} ${s.status} ${s.body.slice(0, 200)}`)).toEqual([]);
    const down = seen.filter((s) => s.phase === 'down');
    expect(down.length).toBeGreaterThan(10);
    expect(down.filter((s) => s.status !== 503).map((s) => `${s.status} ${s.body.slice(0, 300)}`)).toEqual([]);
    for (const s of down) {
      const body = JSON.parse(s.body) as { request_id: string; error_type: string; errors: { message: string }[] };
      expect(body).toEqual({ request_id: s.requestId, error_type: 'api_error', errors: [{ message: expect.any(String) }] });
      expect(Number(s.retryAfter)).toBeGreaterThan(0);
    }
    // Answered while the database was up (sent and answered before the shutdown began): never a 503.
    const upAll = seen.filter((s) => s.phase === 'up' && s.endPhase === 'up');
    expect(upAll.length).toBeGreaterThan(10);
    expect(upAll.filter((s) => s.status === 503).map((s) => s.body.slice(0, 200))).toEqual([]);
    // Requests were in flight during both transitions, and none of them hung or got a 5xx other than 503.
    expect(seen.filter((s) => s.phase === 'stopping' || s.phase === 'starting').length).toBeGreaterThan(0);
    const after = seen.filter((s) => s.phase === 'recovered');
    expect(after.length).toBeGreaterThan(10);
    expect(after.every((s) => [200, 201, 409].includes(s.status)), JSON.stringify(after.filter((s) => s.status >= 500).slice(0, 3))).toBe(true);
    expect(booked).toBeGreaterThan(0);
    expect((await http('GET', `${base}/readyz`)).status).toBe(200);
  }, 180_000);
});
