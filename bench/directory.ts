/**
 * Directory benchmarks (issue #4 §5), run by `npm run bench` through bench/scenarios.ts.
 *
 * `directoryScenarios(ctx)` prepares a seeded directory for `ctx.creds`' developer and returns
 * autocannon scenarios. On the way it measures, and prints:
 * - the import of the generated seed file (NDJSON, through the same code as `directory import`),
 *   first ~5,000 provider-locations, then the rest up to ~50,000;
 * - scaling: the key reads at ~5,000 provider-locations, to compare with the same reads at ~50,000
 *   (the issue asks for cost within 1.5×).
 *
 * Environment: `BENCH_DIRECTORY_PLS` (default 50000) is the target number of provider-locations
 * (the generator makes ~1.25 per provider). Scenarios whose goal is a median latency (NPI list,
 * schedulable entities page of 10,000, search by ZIP) run with one connection, so that p50 is the
 * service's latency rather than queueing.
 *
 * Goals: import under 60 s; `schedulable_entities?page_size=10000` and `reference/npi?page_size=60000`
 * under 300 ms median on PostgreSQL; search by ZIP under 20 ms median.
 */
import { performance } from 'node:perf_hooks';
import { importDirectory } from '../src/domain/directory/import/import-directory.js';
import { documentToNdjson } from '../src/domain/directory/import/ndjson.js';
import { generateDirectory } from '../src/domain/directory/seed.js';
import { measure, type Scenario } from './harness.js';
import type { BenchContext } from './scenarios.js';

const PLS_PER_PROVIDER = 1.25;

/** Generates and imports `providers` providers with `seed` into the developer's directory; returns seconds taken. */
async function importSeed(ctx: BenchContext, providers: number, seed: number): Promise<{ seconds: number; pls: number; bytes: number }> {
  const doc = generateDirectory(providers, seed);
  const text = documentToNdjson(doc);
  const t0 = performance.now();
  const r = await importDirectory(ctx.db, text, { env: ctx.config.appEnv, developerId: ctx.creds.developer_id, format: 'ndjson' });
  const seconds = (performance.now() - t0) / 1000;
  if (!r.ok) throw new Error(`seed import failed: ${JSON.stringify(r.errors.slice(0, 5))}`);
  return { seconds, pls: r.summary.provider_locations, bytes: text.length };
}

/** A few ZIPs that the seeded directory covers densely or sparsely: the first in-person locations' ZIPs. */
async function sampleZips(ctx: BenchContext): Promise<string[]> {
  const rows = await ctx.db
    .selectFrom('locations')
    .select('zip_code')
    .where('env', '=', ctx.config.appEnv)
    .where('is_virtual', '=', false)
    .where('id', 'like', 'lo_1_%')
    .orderBy('id')
    .limit(5)
    .execute();
  return rows.map((r) => r.zip_code!).filter(Boolean);
}

export async function directoryScenarios(ctx: BenchContext): Promise<Scenario[]> {
  const target = Number(process.env.BENCH_DIRECTORY_PLS ?? 50000);
  const small = Math.min(target, 5000);
  const headers = { authorization: `Bearer ${ctx.token}` };
  const log = (s: string) => process.stdout.write(`  [directory] ${s}\n`);

  const first = await importSeed(ctx, Math.round(small / PLS_PER_PROVIDER), 1);
  log(`import of ${first.pls} provider-locations (${(first.bytes / 1e6).toFixed(1)} MB NDJSON): ${first.seconds.toFixed(1)} s`);
  const zips = await sampleZips(ctx);
  const npis = (await ctx.db.selectFrom('providers').select('npi').where('id', 'like', 'pr_1_%').orderBy('id').limit(50).execute()).map((r) => r.npi);

  const reads = (): Scenario[] => [
    { name: 'directory: GET /v1/reference/npi?page_size=60000', baseline: 'select', path: '/v1/reference/npi?page_size=60000', headers, connections: 1 },
    { name: 'directory: GET /v1/schedulable_entities?page_size=10000', baseline: 'select', path: '/v1/schedulable_entities?page_size=10000', headers, connections: 1 },
    {
      name: 'directory: GET /v1/provider_locations search by ZIP (50 mi)',
      baseline: 'select',
      path: `/v1/provider_locations?zip_code=${zips[0] ?? '10001'}&specialty_id=sp_family_medicine&visit_type=all`,
      headers,
      connections: 1,
    },
  ];

  const scaling: { name: string; p50: number }[] = [];
  if (target > small) {
    const opts = { seconds: Math.max(2, Math.round(Number(process.env.BENCH_SECONDS ?? 5) / 2)), connections: 1 };
    for (const s of reads()) {
      const r = await measure(s.name, `${ctx.baseUrl}${s.path}`, s, opts);
      scaling.push({ name: s.name, p50: r.p50 });
      log(`at ${first.pls} provider-locations: ${s.name}: p50 ${r.p50} ms`);
    }
    const rest = await importSeed(ctx, Math.round((target - first.pls) / PLS_PER_PROVIDER), 2);
    log(`import of ${rest.pls} more provider-locations (${(rest.bytes / 1e6).toFixed(1)} MB NDJSON): ${rest.seconds.toFixed(1)} s`);
  }
  const total = await ctx.db
    .selectFrom('developer_provider_locations')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('developer_id', '=', ctx.creds.developer_id)
    .executeTakeFirstOrThrow();
  log(`directory now holds ${String(total.n)} provider-locations; scaling p50s above compare with the runs below`);

  return [
    ...reads(),
    { name: 'directory: GET /v1/provider_locations search by ZIP (10 connections)', baseline: 'select', path: reads()[2]!.path, headers },
    { name: 'directory: GET /v1/providers?npis=<50 NPIs>', baseline: 'select', path: `/v1/providers?npis=${npis.join(',')}`, headers },
    { name: 'directory: GET /v1/provider_locations/{id}', baseline: 'select', path: `/v1/provider_locations/${encodeURIComponent('pr_1_0|lo_1_0_0')}`, headers },
    { name: 'directory: GET /v1/schedulable_entities?page_size=100', baseline: 'select', path: '/v1/schedulable_entities?page_size=100', headers },
    { name: 'directory: GET /v1/specialties', baseline: 'select', path: '/v1/specialties', headers },
    { name: 'directory: GET /v1/insurance_plans?state=CA', baseline: 'select', path: '/v1/insurance_plans?state=CA', headers },
    { name: 'directory: GET /v1-beta/facilities by ZIP (100 mi)', baseline: 'select', path: `/v1-beta/facilities?zip_code=${zips[0] ?? '10001'}&max_distance_to_patient_mi=100`, headers },
  ];
}
