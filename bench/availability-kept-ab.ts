/**
 * A/B of `GET /v1/provider_locations/availability` (docs/performance.md, "Availability from kept
 * schedule data"), one provider-location's default window at `--connections` and 50
 * provider-locations × 7 days at one connection, between the `src` of a commit
 * (`--before <commit>`, extracted with bench/source-tree.ts) and the current `src`: both
 * applications built in this one process on one database, each on its own port, measured in turn
 * with autocannon (a worker thread), the order flipping every round, so host noise falls on both.
 *
 * `node --import tsx bench/availability-kept-ab.ts --before <commit> [--rounds 4] [--seconds 5]
 * [--connections 32] [--pls 2000]`; PGlite on disk in a temporary directory, or a scratch schema on
 * `BENCH_DATABASE_URL`. Prints each measurement and the medians; writes nothing.
 */
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../src/config.js';
import type { Db } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createDeveloper } from '../src/domain/developers/create-developer.js';
import { buildApp } from '../src/http/app.js';
import { bookableRows } from './bookable.js';
import { measure } from './harness.js';
import { ensureDirectory } from './scheduling.js';
import { benchDatabase } from './scratch-schema.js';
import { sourceTreeOf } from './source-tree.js';

type BuildApp = (deps: { config: Config; db: Db }) => Promise<FastifyInstance>;

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const say = (s: string) => process.stdout.write(`${s}\n`);

async function main(): Promise<void> {
  const commit = arg('before');
  if (!commit) throw new Error('--before <commit> is required');
  const rounds = Number(arg('rounds') ?? 4);
  const seconds = Number(arg('seconds') ?? 5);
  const connections = Number(arg('connections') ?? 32);
  const h = await benchDatabase(process.env.BENCH_DATABASE_URL, { prefix: 'bench_avail_ab', poolSize: 40, pgliteDir: tmpdir() });
  await migrateToLatest(h.db);
  const dev = await createDeveloper(h.db, { env: 'sandbox', name: 'availability-ab' });
  await ensureDirectory(h.db, 'sandbox', dev.developer_id, Number(arg('pls') ?? 2_000));
  const port = 24000 + (process.pid % 1000);
  const config = loadConfig({ PORT: String(port), LOG_LEVEL: 'silent', ADMIN_TOKEN: 'bench-admin', RATE_LIMIT_PER_MINUTE: '10000000', KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') });

  const tree = sourceTreeOf(commit, 'availability-before');
  const beforeBuild = ((await import(join(tree.src, 'http/app.ts'))) as { buildApp: BuildApp }).buildApp;
  const apps: [string, FastifyInstance, string][] = [];
  for (const [name, build, p] of [[`before (${commit})`, beforeBuild, port + 1], ['after', buildApp as BuildApp, port]] as const) {
    const app = await build({ config, db: h.db });
    await app.listen({ port: p, host: '127.0.0.1' });
    apps.push([name, app, `http://127.0.0.1:${p}`]);
  }
  const tokenRes = await fetch(`${apps[1]![2]}/auth/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: dev.client_id, client_secret: dev.client_secret, audience: config.audience }),
  });
  const token = ((await tokenRes.json()) as { access_token: string }).access_token;
  const rows = await bookableRows(h.db, dev.developer_id);
  const pl = rows[0]!;
  const reason = pl.reason;
  const fifty = rows.filter((r) => r.reason === reason).slice(0, 50).map((r) => r.id);
  const start = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  const end = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
  const query = (q: Record<string, string>) => `/v1/provider_locations/availability?${new URLSearchParams({ visit_reason_id: reason, patient_type: 'new', ...q })}`;
  const scenarios = [
    { label: '1 PL, default window', path: query({ provider_location_ids: pl.id }), connections },
    { label: `${fifty.length} PLs × 7 days`, path: query({ provider_location_ids: fifty.join(','), start_date_in_provider_local_time: start, end_date_in_provider_local_time: end }), connections: 1 },
  ];
  const headers = { authorization: `Bearer ${token}` };
  for (const sc of scenarios) {
    for (const [name, , base] of apps) {
      const res = await fetch(`${base}${sc.path}`, { headers });
      const body = (await res.json()) as { data?: { timeslots: unknown[] }[] };
      say(`${sc.label}, ${name}: ${res.status}, ${body.data?.map((d) => d.timeslots.length).reduce((a, b) => a + b, 0) ?? '?'} slots`);
      await measure(`${name} warm-up`, `${base}${sc.path}`, { headers }, { seconds: 2, connections: sc.connections });
    }
  }

  for (const sc of scenarios) {
    const out = new Map<string, { rps: number[]; p50: number[]; p99: number[] }>(apps.map(([n]) => [n, { rps: [], p50: [], p99: [] }]));
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? apps : [...apps].reverse();
      for (const [name, , base] of order) {
        const m = await measure(name, `${base}${sc.path}`, { headers }, { seconds, connections: sc.connections });
        const o = out.get(name)!;
        o.rps.push(m.requestsPerSec);
        o.p50.push(m.p50);
        o.p99.push(m.p99);
        say(`${sc.label}, round ${r + 1} ${name} @ ${sc.connections}: ${m.requestsPerSec} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms${m.non2xx ? `, non-2xx ${m.failures}` : ''}`);
      }
    }
    for (const [name, o] of out) say(`${sc.label}, median ${name}: ${median(o.rps)} req/s, p50 ${median(o.p50)} ms, p99 ${median(o.p99)} ms (p99s ${o.p99.join(', ')})`);
  }
  for (const [, app] of apps) await app.close();
  tree.cleanup();
  await h.close();
}

await main();
