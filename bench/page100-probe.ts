/**
 * `GET /v1/schedulable_entities?page_size=100` on a ~5,000 and a ~50,000 provider-location directory
 * in ONE database, measured after both exist (issue #20 §7; docs/performance.md, "Directory reads
 * (issue #20 §7)"): the statements of one warm request with their `EXPLAIN (ANALYZE, BUFFERS)` and
 * their own time (p50 of 50 runs), then warm requests from a worker thread, interleaved.
 *
 * `node --import tsx bench/page100-probe.ts`: PGlite with its data directory on disk under tmpdir
 * (as `npm run bench`); `BENCH_PGLITE=memory`; `BENCH_DATABASE_URL` for a scratch schema on
 * PostgreSQL. `BENCH_SIZES` (default `5000,50000`), `BENCH_WARM` (requests per directory and
 * application, default 300). `PROBE_OTHER=<n>`: first another developer imports ~n provider-locations,
 * left in the 72-hour window (as the scheduling group's directory in `npm run bench`); its own page
 * (everything listed as added) is measured too. `BENCH_AB=<another checkout>` (e.g. `git worktree add
 * /tmp/before <commit>`): that tree's application also serves the same database, measured
 * interleaved. `PROBE_EARLY=1`: each directory is also timed right after its import, alone.
 * `PROBE_KEEP_DIR=<folder>`: PGlite in that folder, kept (with each developer's id) for ad-hoc SQL.
 */
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { CompiledQuery } from 'kysely';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { maintainTables } from '../src/db/table-maintenance.js';
import { refreshAvailabilitySummaries } from '../src/domain/availability/summary-refresh.js';
import { createDeveloper } from '../src/domain/developers/create-developer.js';
import { importDirectory } from '../src/domain/directory/import/import-directory.js';
import { documentToNdjson } from '../src/domain/directory/import/ndjson.js';
import { generateDirectory } from '../src/domain/directory/seed.js';
import { buildApp } from '../src/http/app.js';
import { explain, isRead, planText, StatementCapture } from '../test/helpers/statement-capture.js';
import { benchDatabase } from './scratch-schema.js';
import { backdate } from './backdate.js';
import { percentile, TimedGets } from './timed-gets.js';

const say = (s: string): void => void process.stdout.write(`${s}\n`);

const client = new TimedGets();
const timedGets = (urls: string[], headers: Record<string, string>): Promise<number[]> => client.get(urls, headers);


const KEK = randomBytes(32).toString('base64');

async function main(): Promise<void> {
  const sizes = (process.env.BENCH_SIZES ?? '5000,50000').split(',').map(Number);
  const warmN = Number(process.env.BENCH_WARM ?? 300);
  const url = process.env.BENCH_DATABASE_URL;
  const keep = process.env.PROBE_KEEP_DIR;
  const h = keep
    ? { ...(await openDatabase({ dataDir: keep })), label: `PGlite (kept in ${keep})` }
    : await benchDatabase(url, { prefix: 'probe', poolSize: 40, ...(process.env.BENCH_PGLITE === 'memory' ? {} : { pgliteDir: tmpdir() }) });
  await migrateToLatest(h.db);
  const capture = new StatementCapture();
  const port = 25000 + (process.pid % 1000);
  const base = `http://127.0.0.1:${port}`;
  const config = loadConfig({ PORT: String(port), PUBLIC_BASE_URL: base, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', KEY_ENCRYPTION_KEY: KEK });
  const app = await buildApp({ config, db: capture.on(h.db) });
  await app.listen({ port, host: '127.0.0.1' });
  const apps = [{ label: 'this tree', base }];
  let other2: { close(): Promise<unknown> } | undefined;
  if (process.env.BENCH_AB) {
    // Another tree's application on the same database (migrated by this tree), same public base URL so tokens work at both.
    const build = ((await import(join(process.env.BENCH_AB, 'src/http/app.ts'))) as { buildApp: typeof buildApp }).buildApp;
    const app2 = await build({ config: loadConfig({ PORT: String(port + 1), PUBLIC_BASE_URL: base, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', KEY_ENCRYPTION_KEY: KEK }), db: h.db });
    await app2.listen({ port: port + 1, host: '127.0.0.1' });
    apps.push({ label: process.env.BENCH_AB_LABEL ?? 'before', base: `http://127.0.0.1:${port + 1}` });
    other2 = app2;
  }
  say(`probe on ${h.label}`);
  const devs: { size: number; headers: Record<string, string>; label?: string }[] = [];
  const token = async (creds: { client_id: string; client_secret: string }) => {
    const tokenRes = await fetch(`${base}/auth/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret, audience: config.audience }),
    });
    return { authorization: `Bearer ${((await tokenRes.json()) as { access_token: string }).access_token}` };
  };
  const other = Number(process.env.PROBE_OTHER ?? 0);
  let fresh: { size: number; headers: Record<string, string>; label?: string } | undefined;
  if (other) {
    // Another developer's directory, changed within the 72-hour window (as the scheduling group's in npm run bench).
    const o = await createDeveloper(h.db, { env: 'sandbox', name: 'probe-other' });
    const r = await importDirectory(h.db, documentToNdjson(generateDirectory(Math.round(other / 1.25), 7)), { env: 'sandbox', developerId: o.developer_id, format: 'ndjson' });
    if (!r.ok) throw new Error('import');
    say(`  other developer: ${r.summary.provider_locations} imported, not backdated`);
    fresh = { size: r.summary.provider_locations, headers: await token(o), label: `fresh ${r.summary.provider_locations} (all added)` };
  }
  let seed = 40;
  for (const size of sizes) {
    seed++;
    const creds = await createDeveloper(h.db, { env: 'sandbox', name: `probe-${size}` });
    const tokenRes = await fetch(`${base}/auth/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret, audience: config.audience }),
    });
    const headers = { authorization: `Bearer ${((await tokenRes.json()) as { access_token: string }).access_token}` };
    const t0 = performance.now();
    const r = await importDirectory(h.db, documentToNdjson(generateDirectory(Math.round(size / 1.25), seed)), { env: 'sandbox', developerId: creds.developer_id, format: 'ndjson' });
    if (!r.ok) throw new Error('import');
    say(`  ${r.summary.provider_locations} imported in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await backdate(h.db, 'sandbox', creds.developer_id);
    devs.push({ size: r.summary.provider_locations, headers });
    if (keep) await writeFile(join(keep, `dev-${size}.txt`), creds.developer_id);
    if (process.env.PROBE_EARLY) {
      const ms = await timedGets(Array.from({ length: warmN }, () => `${base}/v1/schedulable_entities?page_size=100`), headers);
      say(`  early, ${r.summary.provider_locations} alone so far: warm p50 ${percentile(ms, 50).toFixed(2)} ms`);
    }
  }
  const t0 = performance.now();
  let n = 0;
  for (;;) {
    const k = await refreshAvailabilitySummaries(h.db, { env: 'sandbox' });
    if (k === 0) break;
    n += k;
  }
  say(`  ${n} summaries refreshed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  say(`  maintainTables: ${JSON.stringify(await maintainTables(h.db))}`);

  const path = '/v1/schedulable_entities?page_size=100';
  for (const d of devs) {
    await timedGets([`${base}${path}`], d.headers);
    const statements = await capture.during(h.db, () => fetch(`${base}${path}`, { headers: d.headers }).then((r) => r.text()));
    say(`\n## ${d.size}: ${statements.length} statements in one warm request`);
    for (const q of statements) {
      say(q.sql.replace(/\s+/g, ' ').slice(0, 600));
      say(`params: ${JSON.stringify(q.parameters).slice(0, 200)}`);
      if (!isRead(q.sql)) continue;
      const times: number[] = [];
      for (let i = 0; i < 50; i++) {
        const s = performance.now();
        await h.db.executeQuery(CompiledQuery.raw(q.sql, [...q.parameters]));
        times.push(performance.now() - s);
      }
      say(`  direct p50 ${percentile(times, 50).toFixed(2)} ms`);
      const plan = await explain(h.db, q, { analyze: true });
      say(planText(plan).map((l) => `  ${l}`).join('\n'));
      say(`  planning ${String((plan as Record<string, unknown>)['Planning Time'] ?? '')}`);
    }
  }
  const all = fresh ? [...devs, fresh] : devs;
  const key = (d: (typeof all)[number], a: (typeof apps)[number]) => `${a.label}: ${d.label ?? d.size}`;
  const warm = new Map<string, number[]>();
  for (const d of all) for (const a of apps) await timedGets([`${a.base}${path}`], d.headers);
  for (let round = 0; round < 6; round++) {
    for (const d of round % 2 ? [...all].reverse() : all) {
      for (const a of round % 2 ? apps : [...apps].reverse()) {
        const k = key(d, a);
        if (!warm.has(k)) warm.set(k, []);
        warm.get(k)!.push(...(await timedGets(Array.from({ length: Math.ceil(warmN / 6) }, () => `${a.base}${path}`), d.headers)));
      }
    }
  }
  for (const [k, v] of warm) say(`warm ${k}: p50 ${percentile(v, 50).toFixed(2)} ms p90 ${percentile(v, 90).toFixed(2)} (n=${v.length})`);
  await client.close();
  await other2?.close();
  await app.close();
  await h.close();
}
await main();
