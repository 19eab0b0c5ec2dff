/**
 * A private primary and its streaming replica on this machine (the read-replica ops test and
 * bench/replica.ts): Debian's PostgreSQL server binaries, run as the `postgres` user when we are root
 * (PostgreSQL refuses to run as root), in a temporary directory. The primary runs with
 * `wal_level=replica`; the replica is a `pg_basebackup -R` of it, started as a hot standby on a
 * second port. Nothing of the machine's shared PostgreSQL server is touched.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

/** The server binaries' directory, when installed. */
export const PG_BIN = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'].find((d) => existsSync(join(d, 'pg_basebackup')));
export const isRoot = process.getuid?.() === 0;

function hasPostgresUser(): boolean {
  try {
    execFileSync('id', ['postgres'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Whether this machine can run the pair (binaries, and the `postgres` user when we are root). */
export const canRunReplicaPair = Boolean(PG_BIN) && (isRoot ? hasPostgresUser() : true);

/** The command line running PostgreSQL binary `cmd`: as the `postgres` user when we are root (PostgreSQL refuses to run as root). */
export function pgBinCommand(cmd: string, args: string[]): [string, string[]] {
  return isRoot ? ['runuser', ['-u', 'postgres', '--', join(PG_BIN!, cmd), ...args]] : [join(PG_BIN!, cmd), args];
}

async function pgBin(cmd: string, args: string[]): Promise<string> {
  const [file, argv] = pgBinCommand(cmd, args);
  return (await promisify(execFile)(file, argv, { encoding: 'utf8', timeout: 120_000 })).stdout;
}

export interface ReplicaPair {
  /** `postgres://…` of the primary's `postgres` database. */
  primaryUrl: string;
  /** The same database on the replica. */
  replicaUrl: string;
  /** Runs one statement on the replica (a fresh connection) and returns its rows. */
  onReplica<T = Record<string, unknown>>(text: string): Promise<T[]>;
  /** The same on the primary. */
  onPrimary<T = Record<string, unknown>>(text: string): Promise<T[]>;
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  /** Stops both servers and removes their directory. */
  close(): Promise<void>;
}

async function query<T>(url: string, text: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows as T[];
  } finally {
    await c.end();
  }
}

/** Starts a primary on `primaryPort` and its hot standby on `replicaPort` (both on 127.0.0.1). */
export async function startReplicaPair(primaryPort: number, replicaPort: number, opts: { serverOptions?: string[] } = {}): Promise<ReplicaPair> {
  const dir = await mkdtemp(join(tmpdir(), 'carebook-replica-'));
  await chmod(dir, 0o777);
  if (isRoot) execFileSync('chown', ['postgres', dir]);
  const primaryData = join(dir, 'primary');
  const replicaData = join(dir, 'replica');
  // Both servers: WAL for a replica (the default since PostgreSQL 10, said here because the pair
  // depends on it), a standby that answers queries, and no fsync (a test's data).
  const common = ['-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'wal_level=replica', '-c', 'hot_standby=on', '-c', 'fsync=off', ...(opts.serverOptions ?? [])];
  const ctl = (data: string, log: string, action: 'start' | 'stop', port?: number) =>
    pgBin('pg_ctl', ['-D', data, '-l', join(dir, log), '-w', '-t', '120', ...(action === 'stop' ? ['-m', 'fast'] : ['-o', [`-p ${port}`, ...pairs(common)].join(' ')]), action]);
  const running = new Set<string>();
  const stopAll = async () => {
    for (const [data, log] of [
      [replicaData, 'replica.log'],
      [primaryData, 'primary.log'],
    ] as const) {
      if (running.has(data)) await ctl(data, log, 'stop').catch(() => undefined);
      running.delete(data);
    }
  };
  try {
    await pgBin('initdb', ['-D', primaryData, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    await ctl(primaryData, 'primary.log', 'start', primaryPort).then(() => running.add(primaryData));
    await pgBin('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaData, '-R', '-X', 'stream', '--no-sync']);
    await ctl(replicaData, 'replica.log', 'start', replicaPort).then(() => running.add(replicaData));
  } catch (err) {
    await stopAll();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
  const replicaUrl = `postgres://postgres@127.0.0.1:${replicaPort}/postgres`;
  return {
    primaryUrl,
    replicaUrl,
    onReplica: (text) => query(replicaUrl, text),
    onPrimary: (text) => query(primaryUrl, text),
    async stopReplica() {
      await ctl(replicaData, 'replica.log', 'stop');
      running.delete(replicaData);
    },
    async startReplica() {
      await ctl(replicaData, 'replica.log', 'start', replicaPort);
      running.add(replicaData);
    },
    async close() {
      await stopAll();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** `['-c', 'a=b', '-c', 'x=y']` as server options (`-c a=b -c x=y`). */
function pairs(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 2) out.push(`${args[i]} ${args[i + 1]}`);
  return out;
}
