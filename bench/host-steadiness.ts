/**
 * `npm run steadiness`: how steady this host's CPU is, and what tail the soak's open-loop method
 * measures here for a trivially simple server.
 *
 * Why: `npm run soak` must show p99 < 3× p50 at 70 % of capacity, and on the 2-vCPU development VM
 * it measured 11–18×. A fixed pure-JS loop there normally takes ~25 ms but, in episodes of
 * 0.1–1.6 s, 40–50 ms: the host delivers unsteady CPU. A request that runs into such an episode
 * takes up to twice as long, and at 70 % load the queue that builds behind it reaches the tail. So
 * the soak's p99/p50 measures the host as well as the service; this script measures the host and
 * the method apart from the service.
 *
 * 1. CPU steadiness: a fixed loop (2e7 iterations of `x += i % 7`) spun back to back for
 *    STEADY_SECONDS (default 10), first in one worker thread, then in `os.availableParallelism()`
 *    worker threads at once (every vCPU busy, as under the soak). Per phase: the median and p99
 *    iteration time, the share of spinning time spent in iterations slower than 1.3× the phase's
 *    median, and the longest run of consecutive slow iterations. A steady host shows ~0 %.
 * 2. Control soak: bench/control-server.ts (bare Fastify, `GET /work` = fixed CPU work of ~1.5–2 ms)
 *    in a child process; its capacity with autocannon (16 connections, CONTROL_CAPACITY_SECONDS,
 *    default 10), then the soak's own generator ({@link pacedLoad}) at CONTROL_LOAD (default 0.7)
 *    of it for CONTROL_SECONDS (default 60) over 16 keep-alive connections. Prints p50–p99,
 *    p99/p50 and the share of requests over 3× p50: the ratio the method gives on this host for a
 *    server with nothing in it to tune. CONTROL_PORT (default 18090) and CONTROL_WORK_ITERATIONS
 *    pass to the server.
 *
 * It only reports: the exit code is 0 unless the script itself fails.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { latencySummary, percentile, runControl } from './control.js';

const STEADY_SECONDS = Number(process.env.STEADY_SECONDS ?? 10);
const CONTROL_SECONDS = Number(process.env.CONTROL_SECONDS ?? 60);
const CONTROL_LOAD = Number(process.env.CONTROL_LOAD ?? 0.7);
const CONTROL_CAPACITY_SECONDS = Number(process.env.CONTROL_CAPACITY_SECONDS ?? 10);
const CONTROL_PORT = Number(process.env.CONTROL_PORT ?? 18090);
/** The soak's connection count (its SOAK_CONNECTIONS default), for capacity and load alike. */
const CONNECTIONS = 16;
/** An iteration this much slower than the median counts as slow. */
const SLOW_FACTOR = 1.3;
/** A fixed p99/p50 target, read against the control (npm run soak judges the service against the control itself). */
const TARGET_RATIO = 3;

/**
 * The spinner, as a worker's source (evaluated, so that it runs as plain JavaScript whatever
 * loader the main thread has): warms up, says `ready`, waits for `go`, then times the fixed loop
 * back to back for `workerData.seconds` and posts every iteration's duration in ms.
 */
const SPINNER = `
const { parentPort, workerData } = require('node:worker_threads');
function spin() { let x = 0; for (let i = 0; i < 2e7; i++) x += i % 7; return x; }
let sink = 0;
for (let k = 0; k < 3; k++) sink += spin();
parentPort.once('message', () => {
  const durations = [];
  const end = performance.now() + workerData.seconds * 1000;
  for (let t = performance.now(); t < end; ) {
    sink += spin();
    const now = performance.now();
    durations.push(now - t);
    t = now;
  }
  parentPort.postMessage({ durations, sink });
});
parentPort.postMessage('ready');
`;

/** One phase's figures: iteration times (ms), the share of spinning time in slow iterations, the longest slow run (ms). */
interface SpinStats {
  threads: number;
  iterations: number;
  medianMs: number;
  p99Ms: number;
  slowShare: number;
  longestSlowRunMs: number;
}

/** Starts a spinner worker and resolves with it once it has warmed up. */
function startSpinner(seconds: number): Promise<Worker> {
  const worker = new Worker(SPINNER, { eval: true, workerData: { seconds } });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', () => resolve(worker));
  });
}

/** Runs `threads` spinners at once for `seconds`; resolves with each one's iteration durations (ms). */
async function spinTogether(threads: number, seconds: number): Promise<number[][]> {
  const workers = await Promise.all(Array.from({ length: threads }, () => startSpinner(seconds)));
  try {
    const results = workers.map((w) => new Promise<number[]>((resolve, reject) => {
      w.once('error', reject);
      w.once('message', (m: { durations: number[] }) => resolve(m.durations));
    }));
    for (const w of workers) w.postMessage('go');
    return await Promise.all(results);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** The longest run of consecutive iterations above `threshold`, in ms. */
function longestRunAbove(durations: number[], threshold: number): number {
  let longest = 0;
  let run = 0;
  for (const d of durations) {
    run = d > threshold ? run + d : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}

/** One phase's figures from each thread's iteration durations; slow is judged against the median of all of them. */
function spinStats(perThread: number[][]): SpinStats {
  const all = perThread.flat().sort((a, b) => a - b);
  const medianMs = percentile(all, 50);
  const threshold = medianMs * SLOW_FACTOR;
  const total = all.reduce((n, d) => n + d, 0);
  const slow = all.filter((d) => d > threshold).reduce((n, d) => n + d, 0);
  return {
    threads: perThread.length,
    iterations: all.length,
    medianMs,
    p99Ms: percentile(all, 99),
    slowShare: total ? slow / total : NaN,
    longestSlowRunMs: Math.max(...perThread.map((d) => longestRunAbove(d, threshold))),
  };
}

function spinLine(s: SpinStats): string {
  return `cpu, ${s.threads} thread${s.threads > 1 ? 's' : ''} × ${STEADY_SECONDS} s (${s.iterations} iterations of 2e7): median ${s.medianMs.toFixed(1)} ms, p99 ${s.p99Ms.toFixed(1)} ms; ${(s.slowShare * 100).toFixed(1)} % of the time in iterations over ${SLOW_FACTOR}× the median; longest slow run ${s.longestSlowRunMs.toFixed(0)} ms`;
}

function spinVerdict(s: SpinStats, single: SpinStats): string {
  const vsSingle = s === single ? '' : `; median ${(s.medianMs / single.medianMs).toFixed(2)}× the one-thread median`;
  return `  → ${s.threads} thread${s.threads > 1 ? 's' : ''}: ${(s.slowShare * 100).toFixed(1)} % of the CPU time ran over ${SLOW_FACTOR}× slower than usual (a steady host: ~0 %), in stretches of up to ${(s.longestSlowRunMs / 1000).toFixed(2)} s${vsSingle}`;
}

/** Runs the control soak (bench/control.ts) at CONTROL_LOAD of its capacity and prints the figures. */
async function controlSoak(): Promise<void> {
  const run = await runControl(
    { port: CONTROL_PORT, connections: CONNECTIONS, capacitySeconds: CONTROL_CAPACITY_SECONDS, load: CONTROL_LOAD, seconds: CONTROL_SECONDS },
    (line) => process.stdout.write(`${line}\n`),
  );
  const s = latencySummary(run.latencies, TARGET_RATIO);
  const lags = [...run.issueLags].sort((a, b) => a - b);
  process.stdout.write(
    [
      `control: capacity ${run.capacity.toFixed(0)} req/s; rate ${run.rate} req/s, achieved ${run.achievedRate.toFixed(0)} req/s; requests ${run.latencies.length} (not 200: ${run.failures})`,
      `control latency: p50 ${s.p50.toFixed(2)} ms, p90 ${s.p90.toFixed(2)} ms, p95 ${s.p95.toFixed(2)} ms, p99 ${s.p99.toFixed(2)} ms; p99/p50 ${s.ratio.toFixed(2)}×; over ${TARGET_RATIO}× p50: ${(s.overShare * 100).toFixed(2)} % of requests`,
      `control: generator's own lag in handing requests over (included above): p50 ${percentile(lags, 50).toFixed(2)} ms, p99 ${percentile(lags, 99).toFixed(2)} ms`,
      `  → control: p99/p50 = ${s.ratio.toFixed(1)}× (a fixed ${TARGET_RATIO}× target) for a bare server with fixed work: ${s.ratio < TARGET_RATIO ? 'the method can meet a fixed target on this host' : 'on this host the method misses a fixed target even with nothing to tune; npm run soak judges the service against this control instead'}`,
    ].join('\n') + '\n',
  );
}

/** Both CPU phases (one thread, then every vCPU at once), printed as they finish. */
async function cpuSteadiness(): Promise<void> {
  const threads = os.availableParallelism();
  process.stdout.write(`cpu: spinning ${STEADY_SECONDS} s in 1 thread, then ${STEADY_SECONDS} s in ${threads} at once…\n`);
  const single = spinStats(await spinTogether(1, STEADY_SECONDS));
  process.stdout.write(`${spinLine(single)}\n`);
  const every = spinStats(await spinTogether(threads, STEADY_SECONDS));
  process.stdout.write(`${spinLine(every)}\n`);
  process.stdout.write(`${spinVerdict(single, single)}\n${spinVerdict(every, single)}\n`);
}

await cpuSteadiness();
await controlSoak();
