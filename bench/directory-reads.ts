/**
 * Directory single reads as a user meets them (issue #20 §7; docs/performance.md, "Directory reads
 * (issue #20 §7)"): four reads, each timed over real HTTP at one connection, on a directory of
 * ~5,000 and then ~50,000 provider-locations of the bench's own developers, warm and cold:
 *
 * - `pl`: `GET /v1/provider_locations/{id}`;
 * - `npis`: `GET /v1/providers?npis=<50 NPIs>`;
 * - `entities`: `GET /v1/schedulable_entities?page_size=100`;
 * - `facilities`: `GET /v1-beta/facilities?zip_code=…&max_distance_to_patient_mi=100`.
 *
 * Warm: the same request `BENCH_WARM` times (after one untimed). Cold: `BENCH_COLD` requests, each
 * for something no earlier request of the run asked for (another provider-location, another 50
 * NPIs, another page among the first 40, another ZIP of the same area), so that the service's
 * in-process memo of availability summaries holds nothing they need. The directory is in its steady state: imported, its changes
 * backdated past the 72-hour window, analysed, and its availability summaries stored by refresh
 * passes as the background worker runs them; before each read's measurements the stored rows are
 * marked as just computed (`computed_at = now()`, as the worker keeps them under 40 s old), since
 * the bench runs longer than the 60 s a stored row may be served. No background job runs.
 *
 * The client is a worker thread (bench/timed-gets-worker.mjs) making one request after another over
 * one keep-alive connection; times are from the request's start to the body's end.
 *
 * A/B in one run: `BENCH_AB=<another checkout>` (e.g. `git worktree add /tmp/before <commit>`)
 * starts that tree's application too, on the same database (migrated by this tree: the other tree
 * must read this schema), and measures both, interleaved: cold requests alternate between them
 * request by request (the order swapped each time), warm ones in `BENCH_ROUNDS` rounds (default 4),
 * so that the host's drift falls on both alike. `BENCH_LABEL` and `BENCH_AB_LABEL` name them.
 *
 * Database: `BENCH_DATABASE_URL` (PostgreSQL: a fresh schema, dropped at the end), else embedded
 * PGlite in memory. `BENCH_SIZES` (default `5000,50000`), `BENCH_WARM` (default 200), `BENCH_COLD`
 * (default 40), `BENCH_READS` (a comma list of `pl`, `npis`, `entities`, `facilities`; default all),
 * `BENCH_EXPLAIN=<folder>` also writes each read's statements (one request of this
 * tree's application) and their `EXPLAIN (ANALYZE, BUFFERS)` to
 * `<folder>/directory-reads-plans-<engine>-<size>.txt`.
 *
 * `node --import tsx bench/directory-reads.ts`
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import type { Db } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { refreshAvailabilitySummaries } from '../src/domain/availability/summary-refresh.js';
import { createDeveloper } from '../src/domain/developers/create-developer.js';
import { importDirectory } from '../src/domain/directory/import/import-directory.js';
import { documentToNdjson } from '../src/domain/directory/import/ndjson.js';
import { generateDirectory } from '../src/domain/directory/seed.js';
import { buildApp } from '../src/http/app.js';
import { explain, isRead, planText, StatementCapture } from '../test/helpers/statement-capture.js';
import { mainThreadCpuUs } from './cpu-meter.js';
import { benchDatabase } from './scratch-schema.js';
import { backdate } from './backdate.js';
import { percentile, TimedGets } from './timed-gets.js';

const PLS_PER_PROVIDER = 1.25;
/** Facilities are searched around ZIPs of the same dense area at every size (the seed picks ZIPs uniformly). */
const ZIPS = ['10001', '10002', '10003', '10011', '10016', '10019', '10022', '10025', '10028', '10036', '11201', '11215', '07302', '07030', '10451', '10463'];
const READS = ['pl', 'npis', 'entities', 'facilities'] as const;
type Read = (typeof READS)[number];
const LABEL: Record<Read, string> = {
  pl: 'GET /v1/provider_locations/{id}',
  npis: 'GET /v1/providers?npis=<50 NPIs>',
  entities: 'GET /v1/schedulable_entities?page_size=100',
  facilities: 'GET /v1-beta/facilities by ZIP (100 mi)',
};

const say = (s: string): void => {
  process.stdout.write(`${s}\n`);
};


const client = new TimedGets();
const timedGets = (urls: string[], headers: Record<string, string>): Promise<number[]> => client.get(urls, headers);

/** `BENCH_DATABASE_URL`: a scratch schema there; else an in-memory PGlite. */
function database(): Promise<{ db: Db; engine: 'pglite' | 'postgres'; label: string; close(): Promise<void> }> {
  return benchDatabase(process.env.BENCH_DATABASE_URL, { prefix: 'bench_reads', poolSize: 10 });
}


interface Measured {
  app: string;
  read: Read;
  size: number;
  warm: number[];
  cold: number[];
  /** CPU time of this process's main thread per warm request (ms): the server's own work, PGlite's included, whatever else the host runs. */
  warmCpu: number;
}

/**
 * CPU time (ms) of this process's main thread so far, from /proc (Linux; 10 ms ticks, so read over
 * batches). Both applications and PGlite run on it; the client runs in a worker thread.
 */
function mainThreadCpuMs(): number {
  try {
    return mainThreadCpuUs() / 1000;
  } catch {
    return NaN;
  }
}

/** An application under measurement: this tree's, or (`BENCH_AB`) another tree's on the same database. */
interface Target {
  label: string;
  base: string;
  close(): Promise<void>;
}

/** Both applications take the same public base URL, so that a token of one (its audience) is good at the other. */
async function startApp(label: string, root: string | undefined, db: Db, port: number, publicBaseUrl: string): Promise<Target> {
  const build = root ? ((await import(join(root, 'src/http/app.ts'))) as { buildApp: typeof buildApp }).buildApp : buildApp;
  const config = loadConfig({ PORT: String(port), PUBLIC_BASE_URL: publicBaseUrl, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', KEY_ENCRYPTION_KEY: KEK });
  const app = await build({ config, db });
  await app.listen({ port, host: '127.0.0.1' });
  return { label, base: `http://127.0.0.1:${port}`, close: () => app.close() };
}
const KEK = randomBytes(32).toString('base64');

async function main(): Promise<void> {
  const sizes = (process.env.BENCH_SIZES ?? '5000,50000').split(',').map(Number);
  const warmN = Number(process.env.BENCH_WARM ?? 200);
  const coldN = Number(process.env.BENCH_COLD ?? 40);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  const plansDir = process.env.BENCH_EXPLAIN;
  const only = process.env.BENCH_READS?.split(',');
  const h = await database();
  await migrateToLatest(h.db);
  const capture = new StatementCapture();
  const port = 24000 + (process.pid % 1000) * 2;
  const publicBaseUrl = `http://127.0.0.1:${port}`;
  const config = loadConfig({ PORT: String(port), PUBLIC_BASE_URL: publicBaseUrl, LOG_LEVEL: 'silent', KEY_ENCRYPTION_KEY: KEK });
  const targets = [await startApp(process.env.BENCH_LABEL ?? 'this tree', undefined, capture.on(h.db), port, publicBaseUrl)];
  if (process.env.BENCH_AB) targets.push(await startApp(process.env.BENCH_AB_LABEL ?? process.env.BENCH_AB, process.env.BENCH_AB, h.db, port + 1, publicBaseUrl));
  const base = targets[0]!.base;
  say(`Directory reads on ${h.label}: ${targets.map((t) => t.label).join(' and ')}${targets.length > 1 ? ', interleaved' : ''}; ${warmN} warm (in ${rounds} rounds) and ${coldN} cold requests per read and application, one connection`);

  const results: Measured[] = [];
  let seed = 40;
  for (const size of sizes) {
    seed++;
    const creds = await createDeveloper(h.db, { env: 'sandbox', name: `bench-reads-${size}` });
    const tokenRes = await fetch(`${base}/auth/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret, audience: config.audience }),
    });
    const headers = { authorization: `Bearer ${((await tokenRes.json()) as { access_token: string }).access_token}` };
    const doc = generateDirectory(Math.round(size / PLS_PER_PROVIDER), seed);
    let t0 = performance.now();
    const r = await importDirectory(h.db, documentToNdjson(doc), { env: 'sandbox', developerId: creds.developer_id, format: 'ndjson' });
    if (!r.ok) throw new Error(`import: ${JSON.stringify(r.errors.slice(0, 3))}`);
    const pls = r.summary.provider_locations;
    say(`  ${pls} provider-locations imported in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await backdate(h.db, 'sandbox', creds.developer_id);
    t0 = performance.now();
    let stored = 0;
    for (;;) {
      const n = await refreshAvailabilitySummaries(h.db, { env: 'sandbox' });
      if (n === 0) break;
      stored += n;
    }
    say(`  ${stored} availability summaries stored in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    // Targets: the first of each for warm, then distinct ones for cold.
    const inPerson = (doc.provider_locations ?? []).filter((pl) => pl.provider_location_type === 'in_person_provider').map((pl) => `${pl.provider_id}|${pl.location_id}`);
    const npis = (doc.providers ?? []).map((p) => p.npi);
    const pages = Math.floor(pls / 100);
    const paths: Record<Read, (i: number) => string> = {
      pl: (i) => `/v1/provider_locations/${encodeURIComponent(inPerson[(i * 37) % inPerson.length]!)}`,
      npis: (i) => `/v1/providers?npis=${npis.slice((i * 50) % (npis.length - 50), ((i * 50) % (npis.length - 50)) + 50).join(',')}`,
      entities: (i) => `/v1/schedulable_entities?page_size=100${i ? `&page=${i % pages}` : ''}`,
      facilities: (i) => `/v1-beta/facilities?zip_code=${ZIPS[i % ZIPS.length]}&max_distance_to_patient_mi=100`,
    };
    for (const read of READS.filter((r) => !only || only.includes(r))) {
      // As the worker keeps them: every row just computed. VACUUM (no ANALYZE: the planner's
      // statistics of computed_at lag behind in service too) so that dead rows do not slow what follows.
      await sql`UPDATE availability_summaries SET computed_at = now()`.execute(h.db);
      await sql`VACUUM availability_summaries`.execute(h.db);
      if (plansDir) await writePlans(h.db, capture, base, headers, read, paths[read](0), join(plansDir, `directory-reads-plans-${h.engine}-${pls}.txt`));
      const byApp = new Map(targets.map((t) => [t.label, { warm: [] as number[], cold: [] as number[], cpuMs: 0 }]));
      // Cold: each application gets target i in turn, the order alternating, so that neither always
      // finds the database's buffers warmed by the other.
      for (let i = 1; i <= coldN; i++) {
        for (const t of i % 2 ? targets : [...targets].reverse()) byApp.get(t.label)!.cold.push(...(await timedGets([`${t.base}${paths[read](i)}`], headers)));
      }
      for (const t of targets) await timedGets([`${t.base}${paths[read](0)}`], headers);
      for (let round = 0; round < rounds; round++) {
        for (const t of round % 2 ? [...targets].reverse() : targets) {
          const m = byApp.get(t.label)!;
          const cpu0 = mainThreadCpuMs();
          m.warm.push(...(await timedGets(Array.from({ length: Math.ceil(warmN / rounds) }, () => `${t.base}${paths[read](0)}`), headers)));
          m.cpuMs += mainThreadCpuMs() - cpu0;
        }
      }
      for (const t of targets) {
        const m = byApp.get(t.label)!;
        const warmCpu = m.cpuMs / m.warm.length;
        results.push({ app: t.label, read, size: pls, warm: m.warm, cold: m.cold, warmCpu });
        say(`  ${t.label}, ${pls}: ${LABEL[read]}: warm p50 ${percentile(m.warm, 50).toFixed(1)} ms p99 ${percentile(m.warm, 99).toFixed(1)} ms (main thread CPU ${warmCpu.toFixed(2)} ms per request); cold p50 ${percentile(m.cold, 50).toFixed(1)} ms p99 ${percentile(m.cold, 99).toFixed(1)} ms`);
      }
    }
  }

  say('');
  say(`| application | read | provider-locations | warm p50 ms | warm p99 ms | warm CPU ms (main thread) | cold p50 ms | cold p99 ms |`);
  say('|---|---|---|---|---|---|---|---|');
  for (const m of results) {
    say(`| ${m.app} | ${LABEL[m.read]} | ${m.size} | ${percentile(m.warm, 50).toFixed(1)} | ${percentile(m.warm, 99).toFixed(1)} | ${m.warmCpu.toFixed(2)} | ${percentile(m.cold, 50).toFixed(1)} | ${percentile(m.cold, 99).toFixed(1)} |`);
  }
  say('');
  const ratio = (x: number[], y: number[]) => (percentile(y, 50) / percentile(x, 50)).toFixed(2);
  for (const t of targets) {
    for (const read of READS) {
      const mine = results.filter((m) => m.app === t.label && m.read === read);
      const [a, b] = [mine[0], mine.at(-1)];
      if (a && b && a !== b) say(`- ${t.label}: ${LABEL[read]}: ${b.size} / ${a.size} p50 ratio warm ${ratio(a.warm, b.warm)}×, cold ${ratio(a.cold, b.cold)}×`);
    }
  }
  if (targets.length > 1) {
    for (const m of results.filter((x) => x.app === targets[1]!.label)) {
      const a = results.find((x) => x.app === targets[0]!.label && x.read === m.read && x.size === m.size)!;
      say(`- ${m.size} ${LABEL[m.read]}: ${targets[0]!.label} / ${m.app} p50 warm ${ratio(m.warm, a.warm)}×, cold ${ratio(m.cold, a.cold)}×`);
    }
  }
  client.close();
  for (const t of targets) await t.close();
  await h.close();
}

/** Writes the statements one request of `read` runs, each with its `EXPLAIN (ANALYZE, BUFFERS)`. */
async function writePlans(db: Db, capture: StatementCapture, base: string, headers: Record<string, string>, read: Read, path: string, file: string): Promise<void> {
  const statements = await capture.during(db, () => fetch(`${base}${path}`, { headers }).then((r) => r.text()));
  const out: string[] = [`# ${LABEL[read]}: ${path}`, ''];
  for (const q of statements) {
    out.push(q.sql.replace(/\s+/g, ' ').slice(0, 2000), `params: ${JSON.stringify(q.parameters).slice(0, 300)}`);
    if (!isRead(q.sql)) {
      out.push('(not a read: not explained)', '');
      continue;
    }
    try {
      out.push(...planText(await explain(db, q, { analyze: true })));
    } catch (e) {
      out.push(`(not explained: ${String(e)})`);
    }
    out.push('');
  }
  await writeFile(file, `${out.join('\n')}\n`, { flag: read === 'pl' ? 'w' : 'a' });
}

await main();
