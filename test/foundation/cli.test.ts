import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { testApp, testPort, type TestApp } from '../helpers/app.js';
import { scaled } from '../helpers/scale.js';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '../../bin/carebook.mjs');

/** The real command line and the real `npm start` process, on the embedded database. */
/** Services this file started: whatever a test leaves running (a failed expectation, a timeout) is killed after it. */
const spawned = new Set<ChildProcess>();
function spawnService(env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  spawned.add(child);
  child.once('exit', () => spawned.delete(child));
  return child;
}
afterEach(() => {
  for (const child of spawned) child.kill('SIGKILL');
  spawned.clear();
});

describe('operator CLI and the service process', () => {
  let dataDir: string;
  let t: TestApp;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'carebook-cli-'));
    t = await testApp();
  });
  afterAll(async () => {
    await t.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const cli = (args: string[], env: Record<string, string> = {}) =>
    run(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH!, DATA_DIR: dataDir, ...env }, timeout: scaled(60_000) });

  it('works through a running service with --url and --admin-token', async () => {
    const url = await t.listen();
    const { stdout } = await cli(['--url', url, '--admin-token', 'test-admin-token-0123456789abcdefgh', 'developer', 'create', '--name', 'Remote Co', '--json']);
    const dev = JSON.parse(stdout);
    expect(dev.client_id).toMatch(/^cl_/);
    const seed = await cli(['--url', url, '--admin-token', 'test-admin-token-0123456789abcdefgh', 'directory', 'seed', '--providers', '3', '--developer', dev.developer_id, '--json']);
    expect(JSON.parse(seed.stdout).provider_locations).toBeGreaterThanOrEqual(3);
    const bad = await cli(['--url', url, '--admin-token', 'wrong', 'developer', 'create', '--name', 'x']).then(() => undefined, (e: { code: number; stderr: string }) => e);
    expect(bad?.code).toBe(1);
    expect(bad?.stderr).toContain('401');
    // Three CLI processes, each starting Node and the TypeScript loader: like the other process tests
    // of this file, more than the default 30 s on a loaded two-core machine (a full suite run beside
    // other work took 30 s).
  }, scaled(120_000));

  it('works directly on a stopped embedded database: npx carebook --help, npm run migrate, directory seed, user create', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'carebook-cli-direct-'));
    const env = { PATH: process.env.PATH!, HOME: process.env.HOME ?? tmpdir(), DATA_DIR: dir };
    const root = join(import.meta.dirname, '../..');
    try {
      const help = await run('npx', ['--no-install', 'carebook', '--help'], { cwd: root, env, timeout: scaled(60_000) });
      for (const command of ['serve', 'worker', 'migrate', 'developer', 'user', 'directory']) expect(help.stdout).toContain(command);
      const migrate = await run('npm', ['run', '--silent', 'migrate'], { cwd: root, env, timeout: scaled(60_000) });
      expect(migrate.stdout).toContain('migrations are current');
      const seeded = JSON.parse((await run(process.execPath, [BIN, 'directory', 'seed', '--providers', '4', '--seed', '7', '--json'], { env, timeout: scaled(60_000) })).stdout);
      expect(seeded.provider_locations).toBeGreaterThanOrEqual(4);
      const patient = JSON.parse((await run(process.execPath, [BIN, 'user', 'create', '--email', 'pat@example.org', '--password', 'a long passphrase', '--role', 'patient', '--json'], { env, timeout: scaled(60_000) })).stdout);
      expect(patient.user_id).toBeTruthy();
      const bad = await run(process.execPath, [BIN, 'user', 'create', '--email', 'x@example.org', '--password', 'a long passphrase', '--role', 'admin'], { env, timeout: scaled(60_000) })
        .then(() => undefined, (e: { code: number; stderr: string }) => e);
      expect(bad?.code).not.toBe(0);
      expect(bad?.stderr).toContain('--role');

      // What the commands wrote is in the data directory.
      const h = await openDatabase({ dataDir: dir });
      try {
        const users = await h.db.selectFrom('users').select(['id', 'role']).execute();
        expect(users).toEqual([{ id: patient.user_id, role: 'patient' }]);
        const pls = await h.db.selectFrom('provider_locations').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        expect(Number(pls.n)).toBeGreaterThanOrEqual(seeded.provider_locations);
      } finally {
        await h.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, scaled(120_000));

  it('rejects bad arguments with a message and a non-zero exit code', async () => {
    const e = await cli(['directory', 'seed', '--providers', 'many']).then(() => undefined, (err: { code: number; stderr: string }) => err);
    expect(e?.code).not.toBe(0);
    expect(e?.stderr).toContain('--providers');
  });

  it('starts on a fresh data directory, prints demo credentials, and restarts without duplicating anything', async () => {
    const port = testPort();
    const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' } as Record<string, string>;
    delete env.DATABASE_URL;
    const start = async (): Promise<{ child: ChildProcess; out: string }> => {
      const child = spawnService(env);
      let out = '';
      child.stdout!.on('data', (d) => (out += String(d)));
      child.stderr!.on('data', (d) => (out += String(d)));
      const deadline = Date.now() + scaled(60_000);
      while (!out.includes('listening on') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
      if (!out.includes("listening on")) throw new Error(`service did not start: ${out}`);
      return { child, out };
    };
    const stop = (child: ChildProcess) =>
      new Promise<string>((resolve) => {
        child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code}`));
        child.kill('SIGTERM');
      });

    const first = await start();
    expect(first.out).toContain('client_secret:');
    const creds = JSON.parse(await readFile(join(dataDir, 'demo-credentials.json'), 'utf8'));
    expect(first.out).toContain(creds.client_secret);
    const health = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(await health.json()).toEqual({ status: 'ok', database: 'ok' });
    const token = await fetch(`http://127.0.0.1:${port}/auth/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret, audience: `http://127.0.0.1:${port}/` }),
    });
    expect(token.status).toBe(200);
    expect(await stop(first.child)).toBe('code 0');

    const second = await start();
    expect(second.out).not.toContain('client_secret:');
    expect(second.out).toContain('demo-credentials.json');
    expect(await stop(second.child)).toBe('code 0');

    // Directly on the (stopped) embedded database: one developer so far, and the CLI adds one.
    const { stdout } = await cli(['developer', 'create', '--name', 'Local Co', '--json']);
    expect(JSON.parse(stdout).developer_id).toMatch(/^dv_/);
  }, scaled(120_000));

  it('a SIGTERM while the service is still starting waits for the start, then shuts down cleanly', async () => {
    // The signal handlers must be in place before the database opens: without them SIGTERM's default
    // action kills the process (exit signal, no code) and can interrupt a half-written start.
    const dir = await mkdtemp(join(tmpdir(), 'carebook-cli-early-'));
    try {
      const env = { ...process.env, DATA_DIR: dir, PORT: String(testPort()), LOG_LEVEL: 'warn' } as Record<string, string>;
      delete env.DATABASE_URL;
      const child = spawnService(env);
      let out = '';
      child.stdout!.on('data', (d) => (out += String(d)));
      child.stderr!.on('data', (d) => (out += String(d)));
      const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code}`)));
      // The embedded database's directory appears once startService has begun opening it.
      const deadline = Date.now() + scaled(60_000);
      while ((await readdir(dir)).length === 0 && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 5));
      expect(out.includes('listening on')).toBe(false);
      child.kill('SIGTERM');
      expect(await exited).toBe('code 0');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, scaled(120_000));
});
