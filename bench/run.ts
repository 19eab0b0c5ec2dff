/**
 * `npm run bench`: runs every benchmark of the project on both engines and prints, per engine, one
 * table of throughput, p50/p99, the ratio to the baselines measured in the same run and PASS/FAIL
 * against each scenario's target; writes each engine's section of bench/results.md, keeping the
 * other engine's section and the sections benchmarks run on their own wrote there
 * (bench/evaluator.ts and others).
 *
 * Engines: without `--engine` the run starts itself once per engine, one after the other, each in
 * its own process: the embedded PGlite (a fresh data directory on disk, as `npm start` keeps it;
 * `BENCH_PGLITE=memory` for an in-memory one), then PostgreSQL at `BENCH_DATABASE_URL`, else
 * `DATABASE_URL`, else `postgres://postgres@127.0.0.1:5432/test` (a fresh schema is created and
 * dropped; skipped with a note when the server does not answer). `BENCH_ENGINE=pglite|postgres`
 * runs one of them.
 *
 * `BENCH_SECONDS` (default 5) per scenario; `BENCH_CONNECTIONS` (default `10,32`): the connection
 * counts every scenario without a fixed count runs at, its baselines measured at each;
 * `BENCH_ONLY` (a regular expression over scenario names; groups it cannot match are not prepared,
 * and results.md is left alone).
 *
 * Beside each row's throughput and latency, the CPU time per request of the thread serving HTTP
 * and, on PostgreSQL, of the server backends (bench/cpu-meter.ts): on which side of the connection a
 * row's cost lies.
 *
 * Scenario groups (bench/scenarios.ts) run in order, each prepared and measured before the next
 * prepares. Every measurement, baselines included, runs autocannon in a worker thread. The service
 * runs as `buildApp` makes it, without the background jobs `npm start` adds (the booking evaluator,
 * summary refresh, webhook delivery): bookings stay pending, and the jobs' own cost is measured by
 * bench/evaluator.ts and the directory group's refresh figures; one row, after every group's,
 * books with the jobs running beside the API as `npm start` runs them (bench/scheduling.ts). It
 * logs as `npm start` does, at `info` (one line per request) through the same kind of destination
 * (pino's default writer, each line handed to an asynchronous write), to a file in the temporary
 * directory instead of stdout; `BENCH_LOG=silent` turns it off (to measure what the logging costs).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createDeveloper } from '../src/domain/developers/create-developer.js';
import { buildApp } from '../src/http/app.js';
import { startJobs } from '../src/jobs/registry.js';
import { loggerOptions } from '../src/http/logger.js';
import { cpuMeter } from './cpu-meter.js';
import { benchDatabase } from './scratch-schema.js';
import { adjacentNote, baselineKey, measure, ratioOf, startBaselines, table, targetSummary, type BaselineName, type Baselines, type Result, type Scenario } from './harness.js';
import { mergeResults, type EngineName } from './results-file.js';
import { normaliseGroup, serviceScenarioGroups, type BenchContext } from './scenarios.js';

const DEFAULT_POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
const RESULTS = join(import.meta.dirname, 'results.md');

function postgresUrl(): string {
  return process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_POSTGRES;
}

/**
 * The engine's database: a scratch schema on PostgreSQL, or a PGlite on disk (or in memory). On
 * PostgreSQL its pool is the one `carebook serve` keeps (`DATABASE_POOL_SIZE`, default 10), shared
 * by the service and the baselines, as users run it.
 */
function database(engine: EngineName): Promise<DatabaseHandle & { label: string }> {
  return benchDatabase(engine === 'postgres' ? postgresUrl() : undefined, {
    prefix: 'bench',
    poolSize: loadConfig(process.env).databasePoolSize,
    preparedStatements: process.env.DATABASE_PREPARED_STATEMENTS !== 'false',
    ...(process.env.BENCH_PGLITE === 'memory' ? {} : { pgliteDir: tmpdir() }),
  });
}

/** Whether PostgreSQL answers at `url` (the run skips it with a note otherwise). */
async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Without `--engine`: one child process per engine, one after the other. */
function runBothEngines(): void {
  const engines = (process.env.BENCH_ENGINE ? [process.env.BENCH_ENGINE] : ['pglite', 'postgres']) as EngineName[];
  for (const engine of engines) {
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'run.ts'), `--engine=${engine}`], { stdio: 'inherit', env: process.env });
    if (child.status !== 0) process.exitCode = child.status ?? 1;
  }
}

async function runEngine(engine: EngineName): Promise<void> {
  const say = (s: string) => process.stdout.write(`${s}\n`);
  if (engine === 'postgres' && !(await postgresAnswers(postgresUrl()))) {
    say(`PostgreSQL at ${new URL(postgresUrl()).host} does not answer: its benchmarks are skipped (bench/results.md keeps its previous section).`);
    return;
  }
  const counts = (process.env.BENCH_CONNECTIONS ?? '10,32').split(',').map(Number).filter((n) => n > 0);
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;
  const h = await database(engine);
  await migrateToLatest(h.db);
  const port = 23000 + (process.pid % 1000);
  // The service's log, as users run it: `info`, each line handed to an asynchronous write as it comes,
  // as pino writes stdout by default (sonic-boom, no buffering).
  const logLevel = process.env.BENCH_LOG ?? 'info';
  // The per-credential rate limit would cap every scenario at 20 req/s: benchmarks measure the service, not the limiter.
  const config = loadConfig({ PORT: String(port), LOG_LEVEL: logLevel, ADMIN_TOKEN: 'bench-admin', RATE_LIMIT_PER_MINUTE: '10000000', KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
  const creds = await createDeveloper(h.db, { env: 'sandbox', name: 'bench' });
  const logFile = join(tmpdir(), `carebook-bench-${process.pid}.log`);
  const logger = pino(loggerOptions(logLevel), pino.destination({ dest: logFile, sync: false, minLength: 0 }));
  const app = await buildApp({ config, db: h.db, logger });
  await app.listen({ port, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${port}`;
  const tokenRes = await fetch(`${baseUrl}/auth/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret, audience: config.audience }),
  });
  const token = ((await tokenRes.json()) as { access_token: string }).access_token;
  const baselines = await startBaselines(h.db, port + 1);
  // CPU per request beside each row: the service's thread, and on PostgreSQL its backends.
  const admin = engine === 'postgres' ? new pg.Client({ connectionString: postgresUrl() }) : undefined;
  await admin?.connect();
  const meter = cpuMeter(admin ? { admin, port: Number(new URL(postgresUrl()).port || 5432) } : undefined);
  const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

  say(`Carebook benchmarks on ${h.label}, ${seconds}s per scenario, ${counts.join(' and ')} connections; load generator in a worker thread; load average ${load()}`);
  say(`  select baseline plan: ${baselines.selectPlan}`);
  const base: Baselines = new Map();
  const results: Result[] = [];
  const baselineAt = async (name: BaselineName, connections: number, label = `baseline: ${name}`): Promise<Result> => ({
    ...(await measure(label, baselines.urls[name], { method: name === 'insert' ? 'POST' : 'GET' }, { seconds, connections, meter })),
    baseline: '-',
  });
  for (const connections of counts) {
    for (const name of ['bare', 'select', 'insert'] as const) {
      const r = await baselineAt(name, connections);
      base.set(baselineKey(name, connections), r);
      results.push(r);
      say(`  ${r.name} @ ${connections}: ${r.requestsPerSec} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms`);
    }
  }

  // The background jobs, for the one row that runs them (`serve` starts them beside the API; the other rows run without).
  const jobs = () => startJobs({ db: h.db, config, engine: h.engine }, logger);
  const ctx: BenchContext = { baseUrl, token, db: h.db, config, creds, engine, counts, startJobs: jobs };
  // Extra lines from the groups (e.g. the directory's import times and 5k → 50k scaling), by group.
  const groupLines: string[] = [];
  for (const group of serviceScenarioGroups(ctx, only)) {
    if (!group.wanted) continue;
    const { scenarios, lines } = normaliseGroup(await group.prepare());
    const measured: Result[] = [];
    for (const s of scenarios) {
      if (only && !only.test(s.name)) continue;
      await s.before?.();
      for (const connections of s.connections ? [s.connections] : counts) {
        const target = typeof s.target === 'function' ? s.target(connections) : s.target;
        const name = s.connections ? s.name : `${s.name} @ ${connections}`;
        // A ratio target is judged against its baseline measured right before and right after it.
        const adjacent = target?.minRatio !== undefined ? async () => (await baselineAt(s.baseline, connections, `baseline: ${s.baseline} (adjacent)`)).requestsPerSec : undefined;
        const before = adjacent ? await adjacent() : undefined;
        const r: Result = { ...(await measure(name, s.url ?? `${baseUrl}${s.path}`, { ...s, connections }, { seconds, connections, meter })), baseline: s.baseline, ...(target ? { target } : {}) };
        if (adjacent) r.adjacentBaseline = { before: before!, after: await adjacent() };
        measured.push(r);
        const ratio = ratioOf(r, base);
        say(`  ${r.name}: ${r.requestsPerSec} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms (${ratio === undefined ? 'no baseline at this count' : `${ratio.toFixed(3)} × ${s.baseline}`}${r.adjacentBaseline ? `; ${adjacentNote(r, base)}` : ''})${r.non2xx ? `, non-2xx ${r.failures}` : ''}`);
      }
      await s.after?.();
    }
    results.push(...measured);
    const extra = lines(measured);
    if (extra.length) {
      for (const l of extra) say(`  [${group.name}] ${l}`);
      groupLines.push(`\n### ${group.name}\n`, ...extra.map((l) => (l.startsWith('-') || l.startsWith('|') ? l : `- ${l}`)));
    }
  }

  const targets = targetSummary(results, base);
  await new Promise<void>((done) => logger.flush(() => done()));
  const logLines = await lineCount(logFile);
  const section = [
    `${new Date().toISOString()} · ${h.label} · Node ${process.version} · ${seconds}s per row at ${counts.join(' and ')} connections (rows with a fixed count say so) · load average at the end ${load()}`,
    '',
    `Select baseline: \`${baselines.selectPlan}\` (100,000 rows).`,
    '',
    `The service logs at \`${logLevel}\` (one line per request at \`info\`), written to a file as \`npm start\` writes stdout (each line handed to an asynchronous write; ${logLines.toLocaleString('en-US')} lines this run); the baselines log nothing.`,
    '',
    engine === 'postgres'
      ? 'CPU µs/req: the CPU time per answered request, while the row ran, of the thread serving HTTP (the service or the baseline handler; the load generator has its own thread) + of the PostgreSQL backends serving this process (bench/cpu-meter.ts).'
      : 'CPU µs/req: the CPU time per answered request, while the row ran, of the thread serving HTTP (the service or the baseline handler, and the embedded engine with them; the load generator has its own thread) (bench/cpu-meter.ts).',
    '',
    table(results, base),
    ...(targets.length ? ['', '### Targets', '', ...targets] : []),
    ...groupLines,
  ].join('\n');
  say(`\n${section}`);
  // A partial run (BENCH_ONLY) prints its table but leaves the full results in place.
  if (!only) await writeFile(RESULTS, mergeResults(await readFile(RESULTS, 'utf8').catch(() => ''), engine, section));
  await baselines.close();
  await admin?.end();
  await app.close();
  await rm(logFile, { force: true });
  await h.close();
}

/** Lines in `file` (the service's log), counted in its bytes without decoding them. */
async function lineCount(file: string): Promise<number> {
  const bytes = await readFile(file).catch(() => Buffer.alloc(0));
  let n = 0;
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) n++;
  return n;
}

export type { Scenario };
const engineArg = process.argv.find((a) => a.startsWith('--engine='))?.slice('--engine='.length) as EngineName | undefined;
if (engineArg) await runEngine(engineArg);
else runBothEngines();
