/**
 * `carebook serve --processes N` (src/cluster.ts): several API processes sharing one port on one
 * PostgreSQL. The primary forks the workers, replaces one that dies, and shuts them all down on
 * SIGTERM; without PostgreSQL the option is refused.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPort } from '../helpers/app.js';
import { freshPgDatabase, http, onboard, ROOT, sleep, startCarebook, type Proc } from './cluster.js';

const baseUrl = process.env.TEST_DATABASE_URL;

/** Pids of the `carebook` processes whose parent is `pid` (the cluster's API processes). */
async function apiProcessesOf(pid: number): Promise<number[]> {
  const out: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid !== pid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('carebook.mjs')) out.push(Number(entry));
  }
  return out.sort((a, b) => a - b);
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.runIf(baseUrl)('serve --processes 2 on PostgreSQL (needs TEST_DATABASE_URL)', () => {
  let db: { url: string; drop(): Promise<void> };
  let primary: Proc;
  let url: string;

  beforeAll(async () => {
    db = await freshPgDatabase(baseUrl!, 'carebook_procs');
    const port = testPort();
    url = `http://127.0.0.1:${port}`;
    primary = await startCarebook(['serve', '--processes', '2'], { DATABASE_URL: db.url, DATA_DIR: `/tmp/carebook-procs-${randomBytes(4).toString('hex')}` }, { port });
  }, 180_000);

  afterAll(async () => {
    await primary?.kill();
    await db?.drop();
  }, 60_000);

  it('runs two API processes behind the primary, which serves no HTTP itself and says so on start', async () => {
    // /readyz answers as soon as the first process listens; the primary speaks once both do.
    for (let i = 0; i < 600 && !primary.output().includes('with 2 API processes'); i++) await sleep(50);
    expect(primary.output()).toContain('with 2 API processes');
    const workers = await apiProcessesOf(primary.child.pid!);
    expect(workers).toHaveLength(2);
    // Without REDIS_URL each process counts rate limits on its own: the operator is told.
    expect(primary.output()).toContain('REDIS_URL is not set');
    const t = await onboard(url, `${url}/`);
    // Fresh connections are dealt round-robin: every request is answered, whichever process takes it.
    for (let i = 0; i < 8; i++) {
      const r = await http('GET', `${url}/v1/specialties?page_size=5`, undefined, { authorization: `Bearer ${t.token}`, connection: 'close' });
      expect(r.status).toBe(200);
    }
  });

  it('replaces an API process that dies, and keeps answering meanwhile', async () => {
    const [victim, survivor] = await apiProcessesOf(primary.child.pid!);
    process.kill(victim!, 'SIGKILL');
    // Once the primary has seen the exit (a connection it dealt to the victim just before is lost, as
    // behind any load balancer), the survivor takes every connection while the replacement starts.
    for (let i = 0; i < 100 && !primary.output().includes(`"worker_pid":${victim}`); i++) await sleep(50);
    for (let i = 0; i < 10; i++) expect((await http('GET', `${url}/readyz`, undefined, { connection: 'close' })).status).toBe(200);
    let now: number[] = [];
    for (let i = 0; i < 150; i++) {
      now = await apiProcessesOf(primary.child.pid!);
      if (now.length === 2 && !now.includes(victim!)) break;
      await sleep(100);
    }
    expect(now).toHaveLength(2);
    expect(now).toContain(survivor);
    expect(now).not.toContain(victim);
    expect(primary.output()).toMatch(new RegExp(`"worker_pid":${victim},"code":null,"signal":"SIGKILL","msg":"API process exited; starting another"`));
    // The replacement listens too (it took over the victim's share of connections).
    const replacement = now.find((p) => p !== survivor)!;
    expect(alive(replacement)).toBe(true);
    for (let i = 0; i < 10; i++) expect((await http('GET', `${url}/healthz`, undefined, { connection: 'close' })).status).toBe(200);
  });

  it('SIGTERM stops every API process gracefully and the primary exits 0', async () => {
    const workers = await apiProcessesOf(primary.child.pid!);
    const exited = once(primary.child, 'exit');
    primary.child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    for (const pid of workers) expect(alive(pid)).toBe(false);
  });
});

describe('serve --processes without PostgreSQL', () => {
  it('is refused: the embedded database admits one process', async () => {
    const child = spawn(process.execPath, ['bin/carebook.mjs', 'serve', '--processes', '2'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATABASE_URL: '', DATA_DIR: `/tmp/carebook-procs-${randomBytes(4).toString('hex')}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d) => (err += String(d)));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(err).toContain('--processes needs DATABASE_URL');
  });

  it('is refused when not a whole number from 1 to 64', async () => {
    const child = spawn(process.execPath, ['bin/carebook.mjs', 'serve', '--processes', 'two'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d) => (err += String(d)));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).not.toBe(0);
    expect(err).toContain('--processes must be an integer from 1 to 64');
  });
});
