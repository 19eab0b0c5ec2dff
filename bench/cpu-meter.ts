/**
 * CPU time per request beside each row of `npm run bench` (docs/performance.md, "Where the targets
 * stand", and "What a read costs on PostgreSQL beyond the select baseline"): the service's main thread (the bench process's own thread: the service and
 * the baselines' handlers run there, the load generator in a worker thread) and, on PostgreSQL,
 * the server backends serving this process's connections, found by their client ports
 * (bench/profile-backends.ts). A ratio of throughputs says how far a row is from its baseline; the
 * CPU split says on which side of the connection the difference lies.
 *
 * Both read from /proc in clock ticks of 10 ms: over a 5-second row of thousands of requests the
 * resolution is a few µs per request.
 */
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { backendCpuMs, portsOf } from './profile-backends.js';

/** CPU per request of one measured row; `serverUs` only on PostgreSQL. */
export interface CpuPerRequest {
  mainUs: number;
  serverUs?: number;
}

/** The readings at a row's start. */
export interface CpuMark {
  mainUs: number;
  backends: Map<number, number>;
}

/** A thread of this process: its CPU time so far (user + system, µs; Linux, in ticks of 10 ms). */
export function threadCpuUs(tid: number | string): number {
  const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** This process's main thread's CPU time so far (user + system, µs; Linux, in ticks of 10 ms). */
export function mainThreadCpuUs(): number {
  return threadCpuUs(process.pid);
}

/**
 * A meter for this process. With `server` (a connected client on the benchmark's PostgreSQL, not
 * one of the pool's, and the server's port), it reads the backends too, all but that client's own.
 */
export function cpuMeter(server?: { admin: pg.Client; port: number }) {
  const own = (server?.admin as { processID?: number } | undefined)?.processID;
  const backends = async (): Promise<Map<number, number>> => {
    if (!server) return new Map();
    const all = await backendCpuMs(server.admin, portsOf(process.pid, server.port));
    if (own !== undefined) all.delete(own);
    return all;
  };
  return {
    async mark(): Promise<CpuMark> {
      return { backends: await backends(), mainUs: mainThreadCpuUs() };
    },
    /**
     * CPU per request since `mark` for `requests` answered. A backend that appeared meanwhile (a new
     * pool connection) counts whole; one that closed meanwhile is missing (the pool keeps its
     * connections while a row runs).
     */
    async since(mark: CpuMark, requests: number): Promise<CpuPerRequest | undefined> {
      const mainUs = mainThreadCpuUs() - mark.mainUs;
      if (requests <= 0) return undefined;
      const out: CpuPerRequest = { mainUs: Math.round(mainUs / requests) };
      if (server) {
        let ms = 0;
        for (const [pid, now] of await backends()) ms += now - (mark.backends.get(pid) ?? 0);
        out.serverUs = Math.round((ms * 1000) / requests);
      }
      return out;
    },
  };
}

export type CpuMeter = ReturnType<typeof cpuMeter>;

/** `118 + 71` (main thread + PostgreSQL) or `540`; `–` without a reading. */
export function formatCpu(cpu: CpuPerRequest | undefined): string {
  if (!cpu) return '–';
  return cpu.serverUs === undefined ? String(cpu.mainUs) : `${cpu.mainUs} + ${cpu.serverUs}`;
}
