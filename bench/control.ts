/**
 * The control soak, shared by `npm run soak` (bench/soak.ts) and `npm run steadiness`
 * (bench/host-steadiness.ts): bench/control-server.ts (bare Fastify, `GET /work` = a fixed ~1.5–2 ms
 * of CPU) in a child process, its closed-loop capacity with autocannon, then the soak's own
 * open-loop generator ({@link pacedLoad}) at a share of that capacity. The tail it measures is the
 * tail this host and this method give a server with nothing in it to tune; the soak judges the
 * service's tail against it (docs/operations.md, "The soak's verdict").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { pacedLoad, sendRequest, type PlainRequest } from './paced-load.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The value at percentile `p` of ascending `sorted` (nearest rank below, as the soak reads its latencies). */
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** How a control run is made. */
export interface ControlOptions {
  /** Port of the control server (below 32768). */
  port: number;
  /** Connections, for the capacity run and the open loop alike (the soak's own count). */
  connections: number;
  /** Seconds of the closed-loop capacity run. */
  capacitySeconds: number;
  /** Share of the capacity the open loop runs at (the soak's SOAK_LOAD). */
  load: number;
  /** Seconds of the open loop. */
  seconds: number;
}

/** What a control run measured: capacity, rate, each response's latency (ms), failures and the generator's lag. */
export interface ControlRun {
  capacity: number;
  rate: number;
  achievedRate: number;
  latencies: number[];
  failures: number;
  issueLags: number[];
}

/** The control server as a child process, once it has said `listening`; `stop` ends it and waits for its exit. */
async function startControlServer(port: number): Promise<{ child: ChildProcess; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/control-server.ts'], {
    cwd: ROOT,
    env: { ...process.env, CONTROL_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        if (out.includes('listening')) resolve();
      });
      child.once('exit', (code, signal) => reject(new Error(`the control server exited (${code ?? signal}) before listening`)));
      setTimeout(() => reject(new Error('the control server did not listen within 60 s')), 60_000).unref();
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { child, stop };
}

/** Closed-loop capacity of `GET /work` with autocannon: responses per second. */
async function measureCapacity(url: string, connections: number, seconds: number): Promise<number> {
  const result = await autocannon({ url, connections, duration: seconds });
  if (result.non2xx || result.errors) throw new Error(`capacity run: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
  return result.requests.average;
}

/** The open loop: `GET /work` at `rate` for `seconds` over `connections` keep-alive connections. */
async function controlLoad(port: number, connections: number, rate: number, seconds: number): Promise<Omit<ControlRun, 'capacity' | 'rate'>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const request: PlainRequest = { host: '127.0.0.1', port, method: 'GET', path: '/work', headers: {} };
  const latencies: number[] = [];
  const issueLags: number[] = [];
  let failures = 0;
  try {
    const { achievedRate } = await pacedLoad({
      rate,
      seconds,
      next: () => request,
      send: (r) => sendRequest(agent, r),
      onResponse: (ms, status) => {
        latencies.push(ms);
        if (status !== 200) failures++;
      },
      onIssue: (lag) => issueLags.push(lag),
    });
    return { latencies, failures, issueLags, achievedRate };
  } finally {
    agent.destroy();
  }
}

/**
 * Starts the control server, measures its capacity, runs the open loop at `load` of it for
 * `seconds`, stops the server and returns the figures. `log` receives progress lines.
 */
export async function runControl(opts: ControlOptions, log: (line: string) => void = () => undefined): Promise<ControlRun> {
  if (!(opts.port > 0 && opts.port < 32768)) throw new Error(`the control port must be in 1–32767 (below the ephemeral range), got ${opts.port}`);
  const server = await startControlServer(opts.port);
  try {
    log(`control: measuring capacity of GET /work (${opts.capacitySeconds} s, ${opts.connections} connections)…`);
    const capacity = await measureCapacity(`http://127.0.0.1:${opts.port}/work`, opts.connections, opts.capacitySeconds);
    const rate = Math.max(1, Math.round(capacity * opts.load));
    log(`control: capacity ${capacity.toFixed(0)} req/s; open loop ${opts.seconds} s at ${rate} req/s (${Math.round(opts.load * 100)} %)…`);
    const run = await controlLoad(opts.port, opts.connections, rate, opts.seconds);
    return { capacity, rate, ...run };
  } finally {
    await server.stop();
  }
}

/** p50–p99 of `latencies` (ms), p99/p50 and the share of requests over `overFactor` × p50. */
export function latencySummary(latencies: number[], overFactor: number): { p50: number; p90: number; p95: number; p99: number; ratio: number; overShare: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  const p99 = percentile(sorted, 99);
  const over = sorted.filter((ms) => ms > overFactor * p50).length;
  return { p50, p90: percentile(sorted, 90), p95: percentile(sorted, 95), p99, ratio: p99 / p50, overShare: sorted.length ? over / sorted.length : NaN };
}
