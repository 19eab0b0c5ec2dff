/**
 * Benchmark harness: autocannon against servers on 127.0.0.1, and the three baselines every
 * scenario is compared with, measured in the same run on the same database:
 * - `bare`: a Fastify handler that returns a constant;
 * - `select`: a Fastify handler doing one indexed SELECT;
 * - `insert`: a Fastify handler doing one transactional INSERT.
 * Absolute numbers vary between machines; the ratios are what we compare.
 */
import autocannon from 'autocannon';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Db } from '../src/db/database.js';

export type BaselineName = 'bare' | 'select' | 'insert';

export interface Scenario {
  name: string;
  /** Which baseline the ratio is taken against. */
  baseline: BaselineName;
  method?: 'GET' | 'POST' | 'PUT';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Per-request bodies (e.g. distinct booking slots); overrides `body`. */
  bodies?: () => string;
  connections?: number;
}

export interface Result {
  name: string;
  baseline: BaselineName | '-';
  requestsPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Non-2xx answers by status code, e.g. `409×12`; errors (timeouts, resets) as `err×N`. */
  failures: string;
}

export interface BenchOptions {
  seconds: number;
  connections: number;
}

/** Runs one autocannon measurement and returns throughput and latency percentiles (ms). */
export async function measure(name: string, url: string, s: Omit<Scenario, 'name' | 'baseline' | 'path'>, opts: BenchOptions): Promise<Omit<Result, 'baseline'>> {
  let firstFailure: string | undefined;
  const result = await autocannon({
    url,
    method: s.method ?? 'GET',
    headers: { ...(s.body || s.bodies ? { 'content-type': 'application/json' } : {}), ...s.headers },
    ...(s.body ? { body: s.body } : {}),
    ...(s.bodies
      ? {
          requests: [
            {
              setupRequest: (req: Record<string, unknown>) => ({ ...req, body: s.bodies!() }),
              onResponse: (status: number, body: string) => {
                if (status >= 300 && firstFailure === undefined) firstFailure = `${status} ${body.slice(0, 300)}`;
              },
            },
          ],
        }
      : {}),
    connections: s.connections ?? opts.connections,
    duration: opts.seconds,
    // A worker thread keeps the load generator off the server's thread; per-request bodies need a
    // function, which cannot cross into a worker, so those scenarios run in-thread.
    ...(s.bodies ? {} : { workers: 1 }),
  } as autocannon.Options);
  if (firstFailure) process.stdout.write(`  first failure of ${name}: ${firstFailure}\n`);
  return {
    name,
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

/** Starts the three baseline servers on the given database; returns their URLs and a closer. */
export async function startBaselines(db: Db, port: number): Promise<{ urls: Record<BaselineName, string>; close(): Promise<void> }> {
  await sql`CREATE TABLE IF NOT EXISTS bench_rows (id bigserial PRIMARY KEY, payload text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`.execute(db);
  const probe = await db.selectFrom('developers').select('id').limit(1).executeTakeFirst();
  const devId = probe?.id ?? 'dv_none';
  const app: FastifyInstance = Fastify({ logger: false });
  app.get('/bare', async () => ({ ok: true }));
  app.get('/select', async () => db.selectFrom('developers').select(['id', 'name']).where('id', '=', devId).executeTakeFirst());
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
    close: async () => {
      await app.close();
      await sql`DROP TABLE IF EXISTS bench_rows`.execute(db);
    },
  };
}

/** A Markdown table of results with each scenario's ratio to its baseline. */
export function table(results: Result[], baselines: Record<BaselineName, Result>): string {
  const rows = results.map((r) => {
    const b = r.baseline === '-' ? undefined : baselines[r.baseline];
    const ratio = b ? (r.requestsPerSec / b.requestsPerSec).toFixed(3) : '1.000';
    return `| ${r.name} | ${r.baseline} | ${r.requestsPerSec} | ${r.p50} | ${r.p99} | ${ratio} | ${r.non2xx}${r.failures ? ` (${r.failures})` : ''} |`;
  });
  return ['| scenario | baseline | req/s | p50 ms | p99 ms | ratio to baseline | non-2xx |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
}
