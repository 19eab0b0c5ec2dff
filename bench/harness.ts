/**
 * Benchmark harness: autocannon against servers on 127.0.0.1, and the three baselines every
 * scenario is compared with, measured in the same run on the same database:
 * - `bare`: a Fastify handler that returns a constant;
 * - `select`: a Fastify handler doing one SELECT by primary key on a 100,000-row table (an index scan,
 *   checked with EXPLAIN);
 * - `insert`: a Fastify handler doing one transactional INSERT.
 *
 * Every measurement, baselines and scenarios alike, runs autocannon in one worker thread, so the
 * load generator never shares the server's event loop. Scenarios with per-request bodies (distinct
 * booking slots) pass them precomputed; bench/request-bodies.cjs hands them out inside the worker.
 * Absolute numbers vary between machines; the ratios are what we compare.
 */
import { join } from 'node:path';
import autocannon from 'autocannon';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../src/db/database.js';
import { formatCpu, type CpuMeter, type CpuPerRequest } from './cpu-meter.js';

export type BaselineName = 'bare' | 'select' | 'insert';

/**
 * A goal a scenario is judged against; every bound it sets must hold: a throughput ratio to its
 * baseline (measured at the same number of connections), a median and/or a 99th-percentile latency.
 */
export interface Target {
  minRatio?: number;
  maxP50Ms?: number;
  maxP99Ms?: number;
  label?: string;
}

export interface Scenario {
  name: string;
  /** Which baseline the ratio is taken against. */
  baseline: BaselineName;
  method?: 'GET' | 'POST' | 'PUT';
  path: string;
  /** An absolute URL to measure instead of the service's `path` (a reference handler of the group's own). */
  url?: string;
  headers?: Record<string, string>;
  body?: string;
  /**
   * Per-request bodies (e.g. distinct booking slots), used in turn; overrides `body`. Each is sent
   * once at most: the row ends after its duration or when the bodies run out, whichever comes first
   * (a booking slot sent twice would measure a refusal, not a booking).
   */
  bodies?: string[];
  /** Per-request paths (e.g. spread over many provider-locations), used in turn; overrides `path`. */
  paths?: string[];
  /**
   * A fixed number of connections. Without it the scenario runs once per count of the run
   * (`BENCH_CONNECTIONS`, default 10 and 32), each row named with its count.
   */
  connections?: number;
  /** Runs once before the scenario's first row (e.g. bookings whose contexts the row then finds kept). */
  before?: () => Promise<void>;
  /** Runs once after the scenario's last row (e.g. a finer timing of the same request in the same state). */
  after?: () => Promise<void>;
  /** Printed as PASS/FAIL in the table and the summary; a function picks one per connection count. */
  target?: Target | ((connections: number) => Target | undefined);
}

export interface Result {
  name: string;
  baseline: BaselineName | '-';
  connections: number;
  requestsPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Non-2xx answers by status code, e.g. `409×12`; errors (timeouts, resets) as `err×N`. */
  failures: string;
  target?: Target;
  /**
   * The baseline's throughput measured right before and right after this scenario (their mean), for
   * scenarios with a ratio target: the machine's speed drifts over a run, and a ratio is fairest
   * against the baseline of the same minutes. Without it the ratio is taken against the run's
   * opening baseline at the same number of connections.
   */
  adjacentBaseline?: { before: number; after: number };
  /** CPU per request while the row ran (bench/cpu-meter.ts), when the run meters it. */
  cpu?: CpuPerRequest;
}

/** The run's opening baselines, by `baselineKey(name, connections)`. */
export type Baselines = Map<string, Result>;

/** The key of a baseline measured at `connections`. */
export function baselineKey(name: BaselineName, connections: number): string {
  return `${name}@${connections}`;
}

export interface BenchOptions {
  seconds: number;
  connections: number;
  /** Reads CPU per request around the row (bench/cpu-meter.ts). */
  meter?: CpuMeter;
}

const BODIES_MODULE = join(import.meta.dirname, 'request-bodies.cjs');

/**
 * Runs one autocannon measurement (in a worker thread) at `connections` and returns throughput and
 * latency percentiles (ms). The scenario's `target` is not read here (run.ts resolves it per count).
 */
export async function measure(name: string, url: string, s: Omit<Scenario, 'name' | 'baseline' | 'path' | 'target' | 'before'>, opts: BenchOptions): Promise<Omit<Result, 'baseline'>> {
  const bodies = s.bodies?.length ? s.bodies : undefined;
  const paths = s.paths?.length ? s.paths : undefined;
  const connections = s.connections ?? opts.connections;
  const mark = await opts.meter?.mark();
  const result = await autocannon({
    url,
    method: s.method ?? 'GET',
    headers: { ...(s.body || bodies ? { 'content-type': 'application/json' } : {}), ...s.headers },
    ...(s.body && !bodies ? { body: s.body } : {}),
    // Read by bench/request-bodies.cjs inside the worker (structured-cloned once).
    ...(bodies || paths ? { requests: [{ setupRequest: BODIES_MODULE }], carebookBodies: bodies ?? [], carebookPaths: paths ?? [] } : {}),
    connections,
    duration: opts.seconds,
    ...(bodies ? { maxOverallRequests: Math.max(bodies.length, connections) } : {}),
    workers: 1,
  } as autocannon.Options);
  const cpu = mark ? await opts.meter!.since(mark, result.requests.total) : undefined;
  return {
    name,
    connections,
    ...(cpu ? { cpu } : {}),
    requestsPerSec: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors,
    failures: [
      ...Object.entries((result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {})
        .filter(([code]) => !code.startsWith('2'))
        .map(([code, v]) => `${code}×${v.count}`),
      ...(result.errors ? [`err×${result.errors}`] : []),
    ].join(' '),
  };
}

const SELECT_ROWS = 100_000;

/**
 * Starts the three baseline servers on the given database; returns their URLs, the `select`
 * baseline's query plan (one line, e.g. `Index Scan using bench_rows_pkey …`) and a closer.
 */
export async function startBaselines(db: Db, port: number): Promise<{ urls: Record<BaselineName, string>; selectPlan: string; close(): Promise<void> }> {
  await sql`DROP TABLE IF EXISTS bench_rows`.execute(db);
  await sql`CREATE TABLE bench_rows (id bigserial PRIMARY KEY, payload text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`.execute(db);
  await sql`INSERT INTO bench_rows (payload) SELECT repeat('x', 64) FROM generate_series(1, ${SELECT_ROWS}::int)`.execute(db);
  await sql`ANALYZE bench_rows`.execute(db);
  const probeId = String(Math.floor(SELECT_ROWS / 2));
  const byId = (id: string) => sql<{ id: string; payload: string }>`SELECT id, payload FROM bench_rows WHERE id = ${id}::bigint`;
  const plan = await sql<{ 'QUERY PLAN': string }>`EXPLAIN ${byId(probeId)}`.execute(db);
  const selectPlan = plan.rows[0]?.['QUERY PLAN'] ?? '';
  if (!/Index (Only )?Scan/.test(selectPlan)) throw new Error(`the select baseline does not use an index: ${selectPlan}`);

  const app: FastifyInstance = Fastify({ logger: false });
  app.get('/bare', async () => ({ ok: true }));
  app.get('/select', async () => (await byId(probeId).execute(db)).rows[0]);
  app.post('/insert', async () =>
    db.transaction().execute(async (trx) => {
      const row = await sql<{ id: string }>`INSERT INTO bench_rows (payload) VALUES (${'x'.repeat(64)}) RETURNING id`.execute(trx);
      return { id: row.rows[0]!.id };
    }),
  );
  await app.listen({ port, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${port}`;
  return {
    urls: { bare: `${base}/bare`, select: `${base}/select`, insert: `${base}/insert` },
    selectPlan: selectPlan.trim(),
    close: async () => {
      await app.close();
      await sql`DROP TABLE IF EXISTS bench_rows`.execute(db);
    },
  };
}

/**
 * The ratio of a result's throughput to its baseline's at the same number of connections (1 for the
 * baselines themselves); undefined when that baseline was not measured (e.g. a one-connection row).
 */
export function ratioOf(r: Result, baselines: Baselines): number | undefined {
  if (r.baseline === '-') return 1;
  if (r.adjacentBaseline) return r.requestsPerSec / ((r.adjacentBaseline.before + r.adjacentBaseline.after) / 2);
  const base = baselines.get(baselineKey(r.baseline, r.connections));
  return base ? r.requestsPerSec / base.requestsPerSec : undefined;
}

/**
 * The adjacent baseline measurements (req/s before and after) and the ratio to the run's opening
 * baseline, for the table; '' without them.
 */
export function adjacentNote(r: Result, baselines: Baselines): string {
  if (!r.adjacentBaseline || r.baseline === '-') return '';
  const opening = baselines.get(baselineKey(r.baseline, r.connections));
  return `${r.baseline} ${r.adjacentBaseline.before} before, ${r.adjacentBaseline.after} after${opening ? `; ${(r.requestsPerSec / opening.requestsPerSec).toFixed(3)} × the opening ${r.baseline}` : ''}`;
}

/** Each bound of a target with its measured value and whether it holds. */
function checks(r: Result, baselines: Baselines): { goal: string; measured: string; pass: boolean }[] {
  const t = r.target;
  if (!t) return [];
  const out: { goal: string; measured: string; pass: boolean }[] = [];
  if (t.minRatio !== undefined) {
    const ratio = ratioOf(r, baselines);
    out.push({ goal: `≥ ${t.minRatio} × ${r.baseline}`, measured: ratio === undefined ? 'no baseline' : `${ratio.toFixed(3)} × ${r.baseline}`, pass: ratio !== undefined && ratio >= t.minRatio });
  }
  if (t.maxP50Ms !== undefined) out.push({ goal: `p50 < ${t.maxP50Ms} ms`, measured: `p50 ${r.p50} ms`, pass: r.p50 < t.maxP50Ms });
  if (t.maxP99Ms !== undefined) out.push({ goal: `p99 < ${t.maxP99Ms} ms`, measured: `p99 ${r.p99} ms`, pass: r.p99 < t.maxP99Ms });
  return out;
}

/** `goal: PASS|FAIL` (every bound of the target) for a result with a target, else ''. */
export function verdict(r: Result, baselines: Baselines): string {
  const c = checks(r, baselines);
  if (!c.length) return '';
  return `${c.map((x) => x.goal).join(', ')}: ${c.every((x) => x.pass) ? 'PASS' : 'FAIL'}`;
}

/** A Markdown table of results with each scenario's ratio to its baseline and its target's verdict. */
export function table(results: Result[], baselines: Baselines): string {
  const rows = results.map((r) => {
    const fails = `${r.non2xx}${r.failures ? ` (${r.failures})` : ''}`;
    const value = ratioOf(r, baselines);
    const ratio = value === undefined ? '–' : `${value.toFixed(3)}${r.adjacentBaseline ? ` (${adjacentNote(r, baselines)})` : ''}`;
    return `| ${r.name} | ${r.connections} | ${r.baseline} | ${r.requestsPerSec} | ${r.p50} | ${r.p99} | ${ratio} | ${formatCpu(r.cpu)} | ${fails} | ${verdict(r, baselines)} |`;
  });
  return ['| scenario | connections | baseline | req/s | p50 ms | p99 ms | ratio to baseline | CPU µs/req | non-2xx | target |', '|---|---|---|---|---|---|---|---|---|---|', ...rows].join('\n');
}

/** One line per result that has a target: `- PASS name: measured (goal)`. */
export function targetSummary(results: Result[], baselines: Baselines): string[] {
  return results
    .filter((r) => r.target)
    .map((r) => {
      const c = checks(r, baselines);
      const label = r.target!.label ? ` — ${r.target!.label}` : '';
      return `- ${c.every((x) => x.pass) ? 'PASS' : 'FAIL'} ${r.name}: ${c.map((x) => x.measured).join(', ')} (goal ${c.map((x) => x.goal).join(', ')})${label}`;
    });
}
