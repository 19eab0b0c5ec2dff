/**
 * The embedded engine's dialect, before and after (docs/performance.md, "The embedded engine's
 * dialect (issue #20 §5)"): `node --import tsx bench/pglite-dialect.ts`.
 *
 * One migrated in-memory PGlite, two Kysely instances over it: `PGliteQueryDialect` (every statement
 * through `PGlite.query()`: six engine calls, parsed and planned each time) and `PGliteDialect` (a
 * named prepared statement, one engine call). In alternating rounds (the host is shared and
 * unsteady; the order flips every round) it times:
 * 1. statements through Kysely on a 10,000-row table: a point read by primary key, a 50-row read
 *    with timestamptz, jsonb and text[] columns, an INSERT … RETURNING, an UPDATE by key, and a
 *    transaction of a locking read and an UPDATE (BEGIN and COMMIT still go through
 *    `PGlite.transaction()` on both sides);
 * 2. endpoints through `fastify.inject` on two apps, one per dialect, over the same database:
 *    `GET /v1/appointments/{id}` and `GET /v1/specialties`.
 * It prints per-round figures and the medians (µs per statement or request), the ratio old/new of
 * the medians, and the median of the per-round ratios (each round measures both sides back to back).
 *
 * Environment: `ROUNDS` (default 7), `STATEMENTS` per round and statement (default 2000),
 * `REQUESTS` per round and endpoint (default 400).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { decodeJwt } from 'jose';
import { CompiledQuery, Kysely } from 'kysely';
import { DateTime } from 'luxon';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { PGliteDialect, PGliteQueryDialect } from '../src/db/pglite-dialect.js';
import type { Database } from '../src/db/schema.js';
import { computeAvailability } from '../src/domain/availability/slot-lists.js';
import { createDeveloper } from '../src/domain/developers/create-developer.js';
import { buildApp } from '../src/http/app.js';
import { bookingBody, ensureDirectory } from './scheduling.js';

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const STATEMENTS = Number(process.env.STATEMENTS ?? 2000);
const REQUESTS = Number(process.env.REQUESTS ?? 400);
const ROWS = 10_000;

type Variant = 'old' | 'new';
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const say = (s: string) => process.stdout.write(`${s}\n`);
  const h = await openDatabase({ inMemory: true });
  await migrateToLatest(h.db);
  const pglite = h.pglite!;
  const dbs: Record<Variant, Kysely<Database>> = {
    old: new Kysely<Database>({ dialect: new PGliteQueryDialect(pglite) }),
    new: new Kysely<Database>({ dialect: new PGliteDialect(pglite) }),
  };

  await pglite.exec(`
    CREATE TABLE bench_dialect (id int8 PRIMARY KEY, name text NOT NULL, at timestamptz NOT NULL, doc jsonb NOT NULL, tags text[] NOT NULL);
    INSERT INTO bench_dialect SELECT g, 'row ' || g, now() - g * interval '1 minute', jsonb_build_object('n', g, 'k', ARRAY['a','b']), ARRAY['t' || g % 7, 'x']
      FROM generate_series(1, ${ROWS}) g;
    ANALYZE bench_dialect;
  `);
  let nextId = ROWS + 1;
  const statements: Record<string, (db: Kysely<Database>, i: number) => Promise<unknown>> = {
    'point read by primary key': (db, i) => db.executeQuery(CompiledQuery.raw('SELECT * FROM bench_dialect WHERE id = $1', [1 + ((i * 7919) % ROWS)])),
    '50-row read (timestamptz, jsonb, text[])': (db, i) =>
      db.executeQuery(CompiledQuery.raw('SELECT id, name, at, doc, tags FROM bench_dialect WHERE id BETWEEN $1 AND $2 ORDER BY id', [1 + (i % 9000), 50 + (i % 9000)])),
    'INSERT … RETURNING': (db) =>
      db.executeQuery(CompiledQuery.raw('INSERT INTO bench_dialect (id, name, at, doc, tags) VALUES ($1, $2, $3, $4, $5) RETURNING id, at', [nextId++, 'new', new Date(), { n: 1 }, ['a', 'b']])),
    'UPDATE by primary key': (db, i) => db.executeQuery(CompiledQuery.raw('UPDATE bench_dialect SET name = $1 WHERE id = $2', [`u${i}`, 1 + ((i * 31) % ROWS)])),
    'transaction: point read + UPDATE': (db, i) =>
      db.transaction().execute(async (trx) => {
        await trx.executeQuery(CompiledQuery.raw('SELECT * FROM bench_dialect WHERE id = $1 FOR UPDATE', [1 + ((i * 13) % ROWS)]));
        await trx.executeQuery(CompiledQuery.raw('UPDATE bench_dialect SET name = $1 WHERE id = $2', [`t${i}`, 1 + ((i * 13) % ROWS)]));
      }),
  };

  // Two apps over the same database, one per dialect.
  const config = loadConfig({ PORT: '23999', LOG_LEVEL: 'silent', ADMIN_TOKEN: 'bench-admin', RATE_LIMIT_PER_MINUTE: '10000000', KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
  const creds = await createDeveloper(h.db, { env: 'sandbox', name: 'bench' });
  const apps = { old: await buildApp({ config, db: dbs.old }), new: await buildApp({ config, db: dbs.new }) };
  const tokenRes = await apps.new.inject({
    method: 'POST',
    url: '/auth/oauth/token',
    payload: { grant_type: 'client_credentials', client_id: creds.client_id, client_secret: creds.client_secret, audience: config.audience },
  });
  const token = (tokenRes.json() as { access_token: string }).access_token;
  const auth = { authorization: `Bearer ${token}` };
  await ensureDirectory(h.db, 'sandbox', String(decodeJwt(token).dev), 500);
  const reason = 'pc_family_medicine_1';
  const pls = await h.db.selectFrom('developer_provider_locations').select('provider_location_id as id').where('developer_id', '=', String(decodeJwt(token).dev)).execute();
  const free = await computeAvailability(h.db, {
    env: 'sandbox', providerLocationIds: pls.map((p) => p.id), visitReasonId: reason, patientType: 'new',
    from: DateTime.utc().plus({ days: 2 }).toISODate()!, to: DateTime.utc().plus({ days: 9 }).toISODate()!,
  });
  let appointmentId: string | undefined;
  for (const [pl, a] of free) {
    for (const slot of a.slots) {
      const res = await apps.new.inject({ method: 'POST', url: '/v1/appointments', headers: auth, payload: bookingBody(pl, slot.startTime, reason) });
      if (res.statusCode === 200) appointmentId = (res.json() as { data: { appointment_id: string } }).data.appointment_id;
      if (appointmentId) break;
    }
    if (appointmentId) break;
  }
  if (!appointmentId) throw new Error('could not book an appointment to read');
  const endpoints = { 'GET /v1/appointments/{id}': `/v1/appointments/${appointmentId}`, 'GET /v1/specialties': '/v1/specialties' };
  for (const [name, url] of Object.entries(endpoints)) {
    for (const v of ['old', 'new'] as const) {
      const res = await apps[v].inject({ url, headers: auth });
      if (res.statusCode !== 200) throw new Error(`${name} (${v}): ${res.statusCode} ${res.body}`);
    }
    const a = await apps.old.inject({ url, headers: auth });
    const b = await apps.new.inject({ url, headers: auth });
    if (JSON.stringify(a.json().data) !== JSON.stringify(b.json().data)) throw new Error(`${name}: the two dialects answer differently:\n${a.body}\n${b.body}`);
  }

  const samples = new Map<string, Record<Variant, number[]>>();
  const record = (name: string, v: Variant, us: number) => {
    const s = samples.get(name) ?? { old: [], new: [] };
    s[v].push(us);
    samples.set(name, s);
  };
  // Warm-up: both paths, every statement and endpoint (prepares the named statements, JIT).
  for (const v of ['old', 'new'] as const) {
    for (const run of Object.values(statements)) for (let i = 0; i < 200; i++) await run(dbs[v], i);
    for (const url of Object.values(endpoints)) for (let i = 0; i < 50; i++) await apps[v].inject({ url, headers: auth });
  }
  say(`PGlite dialect bench: ${ROUNDS} rounds × ${STATEMENTS} statements and ${REQUESTS} requests, order alternating`);
  for (let round = 0; round < ROUNDS; round++) {
    const order: Variant[] = round % 2 ? ['new', 'old'] : ['old', 'new'];
    const line: string[] = [];
    for (const [name, run] of Object.entries(statements)) {
      for (const v of order) {
        const t0 = performance.now();
        for (let i = 0; i < STATEMENTS; i++) await run(dbs[v], round * STATEMENTS + i);
        record(name, v, ((performance.now() - t0) * 1000) / STATEMENTS);
      }
    }
    for (const [name, url] of Object.entries(endpoints)) {
      for (const v of order) {
        const t0 = performance.now();
        for (let i = 0; i < REQUESTS; i++) await apps[v].inject({ url, headers: auth });
        record(name, v, ((performance.now() - t0) * 1000) / REQUESTS);
      }
    }
    for (const [name, s] of samples) line.push(`${name}: ${s.old.at(-1)!.toFixed(0)}/${s.new.at(-1)!.toFixed(0)}`);
    say(`  round ${round + 1} (old/new µs): ${line.join('; ')}`);
  }
  say('');
  say('| statement or endpoint | old: PGlite.query() (µs, median) | new: one call, named (µs, median) | old/new of the medians | old/new per round (median, min–max) |');
  say('|---|---:|---:|---:|---:|');
  for (const [name, s] of samples) {
    const o = median(s.old);
    const n = median(s.new);
    const perRound = s.old.map((x, i) => x / s.new[i]!);
    say(`| ${name} | ${o.toFixed(0)} | ${n.toFixed(0)} | ${(o / n).toFixed(2)}× | ${median(perRound).toFixed(2)}× (${Math.min(...perRound).toFixed(2)}–${Math.max(...perRound).toFixed(2)}) |`);
  }
  await apps.old.close();
  await apps.new.close();
  await dbs.old.destroy().catch(() => undefined);
  await h.close().catch(() => undefined);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
