/**
 * `npm run bench`: runs every benchmark of the project and prints one table of throughput, p50/p99,
 * the ratio to the baselines measured in the same run and PASS/FAIL against each scenario's target;
 * writes it to bench/results.md, keeping the sections benchmarks run on their own wrote there
 * (bench/evaluator.ts).
 *
 * Database, as the service picks it: `BENCH_DATABASE_URL`, else `DATABASE_URL` (PostgreSQL; a fresh
 * schema is created and dropped), else embedded PGlite in memory. `BENCH_SECONDS` (default 5) per
 * scenario, `BENCH_CONNECTIONS` (default 10), `BENCH_ONLY` (a regular expression over scenario
 * names; groups it cannot match are not prepared, and results.md is left alone).
 *
 * Scenario groups (bench/scenarios.ts) run in order, each prepared and measured before the next
 * prepares. Every measurement, baselines included, runs autocannon in a worker thread.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import type { DatabaseHandle } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createDeveloper } from '../src/domain/developers/create-developer.js';
import { buildApp } from '../src/http/app.js';
import { benchDatabase } from './scratch-schema.js';
import { adjacentNote, measure, ratioOf, startBaselines, table, targetSummary, type BaselineName, type Result, type Scenario } from './harness.js';
import { normaliseGroup, serviceScenarioGroups, type BenchContext } from './scenarios.js';

/** `BENCH_DATABASE_URL` (or `DATABASE_URL`): a scratch schema there; else an in-memory PGlite. */
function database(): Promise<DatabaseHandle & { label: string }> {
  return benchDatabase(process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL, {
    prefix: 'bench',
    poolSize: 20,
    preparedStatements: process.env.DATABASE_PREPARED_STATEMENTS !== 'false',
  });
}

async function main(): Promise<void> {
  const opts = { seconds: Number(process.env.BENCH_SECONDS ?? 5), connections: Number(process.env.BENCH_CONNECTIONS ?? 10) };
  const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;
  const h = await database();
  await migrateToLatest(h.db);
  const port = 23000 + (process.pid % 1000);
  // The per-credential rate limit would cap every scenario at 20 req/s: benchmarks measure the service, not the limiter.
  const config = loadConfig({ PORT: String(port), LOG_LEVEL: 'silent', ADMIN_TOKEN: 'bench-admin', RATE_LIMIT_PER_MINUTE: '10000000', KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
  const creds = await createDeveloper(h.db, { env: 'sandbox', name: 'bench' });
  const app = await buildApp({ config, db: h.db });
  await app.listen({ port, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${port}`;
  const tokenRes = await fetch(`${baseUrl}/auth/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret, audience: config.audience }),
  });
  const token = ((await tokenRes.json()) as { access_token: string }).access_token;
  const baselines = await startBaselines(h.db, port + 1);

  const say = (s: string) => process.stdout.write(`${s}\n`);
  say(`Carebook benchmarks on ${h.label}, ${opts.seconds}s per scenario, ${opts.connections} connections; load generator in a worker thread`);
  say(`  select baseline plan: ${baselines.selectPlan}`);
  const base: Record<BaselineName, Result> = {} as Record<BaselineName, Result>;
  for (const name of ['bare', 'select', 'insert'] as const) {
    const r = await measure(`baseline: ${name}`, baselines.urls[name], { method: name === 'insert' ? 'POST' : 'GET' }, opts);
    base[name] = { ...r, baseline: '-' };
    say(`  ${r.name}: ${r.requestsPerSec} req/s`);
  }

  const baselineNow = async (name: BaselineName): Promise<number> =>
    (await measure(`baseline: ${name} (adjacent)`, baselines.urls[name], { method: name === 'insert' ? 'POST' : 'GET' }, opts)).requestsPerSec;

  const ctx: BenchContext = { baseUrl, token, db: h.db, config, creds, engine: h.engine };
  const results: Result[] = [base.bare, base.select, base.insert];
  // Extra lines from the groups (e.g. the directory's import times and 5k → 50k scaling), by group.
  const groupLines: string[] = [];
  for (const group of serviceScenarioGroups(ctx, only)) {
    if (!group.wanted) continue;
    const { scenarios, lines } = normaliseGroup(await group.prepare());
    const measured: Result[] = [];
    for (const s of scenarios) {
      if (only && !only.test(s.name)) continue;
      // A ratio target is judged against its baseline measured right before and right after it.
      const adjacent = s.target && 'minRatio' in s.target ? () => baselineNow(s.baseline) : undefined;
      const before = adjacent ? await adjacent() : undefined;
      const r: Result = { ...(await measure(s.name, s.url ?? `${baseUrl}${s.path}`, s, opts)), baseline: s.baseline };
      if (adjacent) r.adjacentBaseline = { before: before!, after: await adjacent() };
      measured.push(r);
      say(`  ${r.name}: ${r.requestsPerSec} req/s, p50 ${r.p50} ms (${ratioOf(r, base).toFixed(3)} × ${s.baseline}${r.adjacentBaseline ? `; ${adjacentNote(r, base)}` : ''})${r.non2xx ? `, non-2xx ${r.failures}` : ''}`);
    }
    results.push(...measured);
    const extra = lines(measured);
    if (extra.length) {
      for (const l of extra) say(`  [${group.name}] ${l}`);
      groupLines.push(`\n## ${group.name}\n`, ...extra.map((l) => (l.startsWith('-') || l.startsWith('|') ? l : `- ${l}`)));
    }
  }

  const targets = targetSummary(results, base);
  const out = [
    '# Benchmark results',
    '',
    `${new Date().toISOString()} · ${h.label} · Node ${process.version} · ${opts.seconds}s × ${opts.connections} connections per scenario (fewer where a scenario says so) · autocannon in a worker thread for every row`,
    '',
    `Select baseline: \`${baselines.selectPlan}\` (100,000 rows).`,
    '',
    'Ratios are to the baselines at the top of the table, except for rows with a ratio target: those are to the mean of their baseline measured right before and right after them (shown in the row), since the machine\'s speed drifts over a run.',
    '',
    table(results, base),
    ...(targets.length ? ['', '## Targets', '', ...targets] : []),
    ...groupLines,
    '',
  ].join('\n');
  say(`\n${out}`);
  // A partial run (BENCH_ONLY) prints its table but leaves the full results in place.
  if (!only) await writeFile(join(import.meta.dirname, 'results.md'), out + (await standaloneSections()));
  await baselines.close();
  await app.close();
  await h.close();
}

/**
 * The sections of bench/results.md that benchmarks run on their own wrote (their first line says
 * "_Written by `node --import tsx bench/…`", e.g. bench/evaluator.ts): kept when the file is rewritten.
 */
async function standaloneSections(): Promise<string> {
  const old = await readFile(join(import.meta.dirname, 'results.md'), 'utf8').catch(() => '');
  const kept = old.split(/^(?=## )/m).filter((section) => /^## .*\n+_Written by `node --import tsx bench\//.test(section));
  return kept.length ? `\n${kept.join('').trimEnd()}\n` : '';
}

export type { Scenario };
await main();
