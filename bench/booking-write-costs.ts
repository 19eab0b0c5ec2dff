/**
 * What the booking's one atomic statement costs PostgreSQL, and what the schema changes issue #20 §4
 * names would save (docs/performance.md, "The booking write on PostgreSQL"). On a scratch schema
 * of `BENCH_DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/test; the server must run on
 * this host, its backends' CPU is read from /proc): a generated directory, the free slots of
 * ~`BENCH_PLACES` (default 200) provider-locations, and the service's own `bookingStatement`
 * run by 10 connections at once (named statements, as the service runs it), against the insert
 * baseline of `npm run bench` (BEGIN, one-row INSERT, COMMIT) on the same pool. Each row: bookings
 * per second, the pool's PostgreSQL backends' CPU per booking, this process's CPU per booking.
 * Variants, each measured in turn for `BENCH_ROUNDS` (default 3) rounds:
 *
 * - `as is`: the schema of the migrations;
 * - `no developer foreign keys`: without the foreign keys from `patients`, `appointments` and
 *   `outbox_events` to `developers` (each takes FOR KEY SHARE on the booking developer's one row);
 * - `no foreign keys on the five tables`: without any foreign key of the tables the statement writes
 *   (an upper bound of what fewer foreign keys could save);
 * - `no exclusion constraint`: without `appointment_holds_no_overlap` (the text-keyed GiST index);
 *   an upper bound of what integer keys could save.
 *
 * The variants are dropped and re-added between rounds; every booking's hold is deleted after each
 * row so the slots are free again. `node --import tsx bench/booking-write-costs.ts`
 *
 * With `BENCH_DOMAIN=1` it measures instead what the domain adds to the statement for a warm booking
 * (docs/performance.md, "Where the targets stand"): the first slot of each (provider-location, UTC
 * day) is booked through `createAppointment` so its context is kept, then rows of the later slots
 * alternate between the bare statement and `createAppointment` with the kept contexts (the route's
 * call without HTTP), 1,500 bookings each, three rounds.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { BookingContextCache } from '../src/domain/appointments/booking-context-cache.js';
import { bookingStatement, createAppointment } from '../src/domain/appointments/create.js';
import { LocalClock } from '../src/domain/scheduling/local-time.js';
import { computeAvailability } from '../src/domain/availability/slot-lists.js';
import { createDeveloper } from '../src/domain/developers/create-developer.js';
import { generateDirectory } from '../src/domain/directory/seed.js';
import { analyzeDirectory } from '../src/domain/directory/write/analyze.js';
import { writeDirectory } from '../src/domain/directory/write/write-directory.js';
import { loadProviderLocations } from '../src/domain/scheduling/schedule-data.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { bookableRows } from './bookable.js';
import { backendCpuMs, portsOf } from './profile-backends.js';
import { benchDatabase } from './scratch-schema.js';

const URL_ = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PLACES = Number(process.env.BENCH_PLACES ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = 10;
const domainOnly = process.env.BENCH_DOMAIN === '1';
const DAY = 86_400_000;
const say = (s: string) => process.stdout.write(`${s}\n`);

const h = await benchDatabase(URL_, { prefix: 'bench_bw', poolSize: CONNECTIONS });
const db = h.db;
const admin = new pg.Client({ connectionString: URL_ });
await admin.connect();
try {
  await migrateToLatest(db);
  const schema = (await sql<{ s: string }>`SELECT current_schema() AS s`.execute(db)).rows[0]!.s;
  const dev = await createDeveloper(db, { env: 'sandbox', name: 'booking write bench' });
  await db.transaction().execute((trx) => writeDirectory(trx, 'sandbox', generateDirectory(PLACES * 2, 2020), { developerId: dev.developer_id }));
  await analyzeDirectory(db);
  const seen = new Set<string>();
  const chosen = (await bookableRows(db, dev.developer_id)).filter((r) => !seen.has(r.provider_id) && seen.add(r.provider_id)).slice(0, PLACES);
  const contexts = await loadProviderLocations(db, 'sandbox', chosen.map((r) => r.id));
  const jobs: { pl: string; reason: string; start: Date; end: Date }[] = [];
  const today = Date.now();
  for (const reason of new Set(chosen.map((r) => r.reason))) {
    const ids = chosen.filter((r) => r.reason === reason).map((r) => r.id);
    const free = await computeAvailability(db, {
      env: 'sandbox', providerLocationIds: ids, visitReasonId: reason, patientType: 'new',
      from: new Date(today + 2 * DAY).toISOString().slice(0, 10), to: new Date(today + 30 * DAY).toISOString().slice(0, 10),
    });
    for (const [pl, a] of free) for (const s of a.slots) jobs.push({ pl, reason, start: new Date(s.startMs), end: new Date(s.startMs + s.durationMinutes * 60_000) });
  }
  // Spread in time order over the provider-locations, as bookings arrive.
  jobs.sort((a, b) => a.start.getTime() - b.start.getTime() || a.pl.localeCompare(b.pl));
  const N = Math.min(jobs.length, 3000);
  say(`${contexts.size} provider-locations, ${jobs.length} free slots, ${N} bookings per row, ${CONNECTIONS} connections · ${h.label}`);
  const directory = (await sql<{ v: string }>`SELECT version::text AS v FROM directory_version`.execute(db)).rows[0]!.v;
  const calendars = new Map((await sql<{ p: string; v: string }>`SELECT provider_id AS p, version::text AS v FROM calendar_versions WHERE env = 'sandbox'`.execute(db)).rows.map((r) => [r.p, r.v]));
  const principal = { kind: 'client' as const, env: 'sandbox' as const, developerId: dev.developer_id, clientId: dev.client_id, scopes: new Set<string>() };
  const patient = {
    first_name: 'Bench', last_name: 'Patient', date_of_birth: '1980-01-01', sex_at_birth: 'female' as const, phone_number: '2125550123',
    email_address: 'bench@example.org', patient_address: { address1: '1 Main St', city: 'New York', state: 'NY', zip_code: '10001' },
  };
  const texts = new Map<string, string>();
  await sql`CREATE TABLE bench_rows (id bigserial PRIMARY KEY, payload text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`.execute(db);

  const backends = async () => [...(await backendCpuMs(admin, portsOf(process.pid, Number(new URL(URL_).port || 5432)))).values()].reduce((a, b) => a + b, 0);
  const row = async (what: 'booking' | 'insert' | 'create', list: typeof jobs = jobs.slice(0, N)) => {
    let next = 0;
    const pg0 = await backends();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
      for (let i = next++; i < list.length; i = next++) {
        if (what === 'insert') {
          await db.transaction().execute((trx) => sql`INSERT INTO bench_rows (payload) VALUES (${'x'.repeat(64)}) RETURNING id`.execute(trx));
          continue;
        }
        const j = list[i]!;
        if (what === 'create') {
          await create(j);
          continue;
        }
        const pl = contexts.get(j.pl)!;
        const { rows } = await db.executeQuery<{ j: unknown[] }>(bookingStatement(texts, {
          principal, pl, patient, visitReasonId: j.reason, patientType: 'new', start: j.start, end: j.end, now: new Date(),
          versions: { directory, calendar: calendars.get(pl.providerId) ?? '0' },
        }));
        if (rows.length !== 1) throw new Error('a booking wrote nothing');
      }
    }));
    const perSecond = list.length / ((performance.now() - t0) / 1000);
    const cpu = process.cpuUsage(cpu0);
    const server = ((await backends()) - pg0) * 1000 / list.length;
    if (what === 'booking' && !domainOnly) await sql`DELETE FROM appointment_holds`.execute(db);
    return { perSecond, serverUs: server, nodeUs: (cpu.user + cpu.system) / list.length };
  };
  const kept = new BookingContextCache(100_000);
  const clock = new LocalClock();
  const createTexts = new Map<string, string>();
  const create = (j: (typeof jobs)[number]) =>
    createAppointment(db, principal, { appointment_type: 'providers', data: { start_time: j.start.toISOString(), visit_reason_id: j.reason, provider_location_id: j.pl, patient_type: 'new', patient } }, { clock, statementTexts: createTexts, contexts: kept });

  if (domainOnly) {
    const byDay = new Map<string, typeof jobs>();
    for (const j of jobs) {
      const k = `${j.pl}|${Math.floor(j.start.getTime() / DAY)}`;
      byDay.set(k, [...(byDay.get(k) ?? []), j]);
    }
    for (const g of byDay.values()) await create(g[0]!);
    const later = [...byDay.values()].flatMap((g) => g.slice(1));
    say(`warm: ${byDay.size} (provider-location, day) contexts kept, ${later.length} later slots`);
    say('| round | statement: bookings/s | PostgreSQL µs | Node µs | createAppointment: bookings/s | PostgreSQL µs | Node µs |');
    say('|---|---|---|---|---|---|---|');
    for (let r = 0; r < 3; r++) {
      const s0 = await row('booking', later.slice(3000 * r, 3000 * r + 1500));
      const c0 = await row('create', later.slice(3000 * r + 1500, 3000 * r + 3000));
      say(`| ${r + 1} | ${s0.perSecond.toFixed(0)} | ${s0.serverUs.toFixed(0)} | ${s0.nodeUs.toFixed(0)} | ${c0.perSecond.toFixed(0)} | ${c0.serverUs.toFixed(0)} | ${c0.nodeUs.toFixed(0)} |`);
    }
  }

  const foreignKeys = async (referenced: string | undefined) =>
    (await admin.query<{ t: string; name: string; def: string }>(
      `SELECT conrelid::regclass::text AS t, conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE contype = 'f' AND connamespace = $1::regnamespace AND ($2::text IS NULL OR confrelid = ($1 || '.' || $2)::regclass)
         AND conrelid = ANY (ARRAY(SELECT ($1 || '.' || t)::regclass FROM unnest($3::text[]) AS t))`,
      [schema, referenced ?? null, referenced ? ['patients', 'appointments', 'outbox_events'] : ['patients', 'appointments', 'appointment_holds', 'outbox_events', 'audit_log']],
    )).rows;
  const fks = await foreignKeys('developers');
  const allFks = await foreignKeys(undefined);
  const dropping = (list: typeof fks) => ({
    apply: async () => { for (const f of list) await admin.query(`ALTER TABLE ${f.t} DROP CONSTRAINT ${f.name}`); },
    undo: async () => { for (const f of list) await admin.query(`ALTER TABLE ${f.t} ADD CONSTRAINT ${f.name} ${f.def}`); },
  });
  const exclusion = (await admin.query<{ def: string }>(`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'appointment_holds_no_overlap' AND connamespace = $1::regnamespace`, [schema])).rows[0]!.def;
  const variants: { name: string; apply(): Promise<void>; undo(): Promise<void> }[] = [
    { name: 'as is', apply: async () => undefined, undo: async () => undefined },
    { name: `no foreign keys to developers (${fks.length})`, ...dropping(fks) },
    { name: `no foreign keys on the five tables (${allFks.length})`, ...dropping(allFks) },
    {
      name: 'no exclusion constraint',
      apply: async () => void (await admin.query(`ALTER TABLE "${schema}".appointment_holds DROP CONSTRAINT appointment_holds_no_overlap`)),
      undo: async () => void (await admin.query(`ALTER TABLE "${schema}".appointment_holds ADD CONSTRAINT appointment_holds_no_overlap ${exclusion}`)),
    },
  ];
  if (!domainOnly) await row('booking');
  if (!domainOnly) await row('insert');
  const results = new Map<string, { ratio: number; perSecond: number; serverUs: number; nodeUs: number }[]>();
  for (let r = 0; r < (domainOnly ? 0 : ROUNDS); r++) {
    for (const v of variants) {
      await v.apply();
      const before = await row('insert');
      const b = await row('booking');
      const after = await row('insert');
      await v.undo();
      const list = results.get(v.name) ?? [];
      list.push({ ratio: b.perSecond / ((before.perSecond + after.perSecond) / 2), perSecond: b.perSecond, serverUs: b.serverUs, nodeUs: b.nodeUs });
      results.set(v.name, list);
    }
  }
  if (!domainOnly) {
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const load = (await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ');
    say(`\n${new Date().toISOString()} · medians of ${ROUNDS} rounds · load average ${load}\n`);
    say('| variant | bookings/s | × insert (adjacent) | PostgreSQL µs/booking | Node µs/booking |');
    say('|---|---|---|---|---|');
    for (const [name, list] of results) {
      say(`| ${name} | ${median(list.map((x) => x.perSecond)).toFixed(0)} | ${median(list.map((x) => x.ratio)).toFixed(3)} | ${median(list.map((x) => x.serverUs)).toFixed(0)} | ${median(list.map((x) => x.nodeUs)).toFixed(0)} |`);
    }
  }
} finally {
  await admin.end();
  await h.close();
}
