/**
 * The PostgreSQL server backends serving one process's connections, and their CPU time, for
 * bench/profile.ts: the process's sockets to the server's port are found from /proc (its file
 * descriptors' socket inodes, matched in its `net/tcp` tables), the backends by those client ports
 * in `pg_stat_activity`, and each backend's CPU time read from its /proc entry as bench/evaluator.ts
 * does (the server must run on this host; clock ticks of 10 ms).
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type pg from 'pg';

/** Local TCP ports of `pid`'s sockets connected to `remotePort`. */
export function portsOf(pid: number, remotePort: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9]!)) continue;
      const local = parseInt(f[1]!.split(':')[1]!, 16);
      const remote = parseInt(f[2]!.split(':')[1]!, 16);
      if (remote === remotePort) ports.push(local);
    }
  }
  return ports;
}

/** CPU milliseconds (user + system) used so far by the backends whose client port is in `ports`, by backend pid. */
export async function backendCpuMs(admin: pg.Client, ports: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (!ports.length) return out;
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1::int[])', [ports]);
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      out.set(pid, (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // gone, or on another host
    }
  }
  return out;
}
