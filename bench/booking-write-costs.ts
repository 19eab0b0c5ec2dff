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
import { createAppointment } from '../src/domain/appointments/create.js';
import { bookingStatement } from '../src/domain/appointments/booking-write.js';
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
const coldOnly = process.env.BENCH_COLD === '1';
const domainOnly = process.env.BENCH_DOMAIN === '1' || coldOnly;
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

  // The server's WAL (all databases): bytes and full-page images written per booking.
  const wal = async () => {
    const r = (await admin.query<{ bytes: string; fpi: string }>('SELECT wal_bytes::text AS bytes, wal_fpi::text AS fpi FROM pg_stat_wal')).rows[0]!;
    return { bytes: Number(r.bytes), fpi: Number(r.fpi) };
  };
  const backends = async () => [...(await backendCpuMs(admin, portsOf(process.pid, Number(new URL(URL_).port || 5432)))).values()].reduce((a, b) => a + b, 0);
  const row = async (what: 'booking' | 'insert' | 'create' | 'create-two', list: typeof jobs = jobs.slice(0, N)) => {
    let next = 0;
    const wal0 = await wal();
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
        if (what === 'create' || what === 'create-two') {
          await create(j, what === 'create-two');
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
    const wal1 = await wal();
    if (what === 'booking' && !domainOnly) await sql`DELETE FROM appointment_holds`.execute(db);
    return {
      perSecond, serverUs: server, nodeUs: (cpu.user + cpu.system) / list.length,
      walKb: (wal1.bytes - wal0.bytes) / 1024 / list.length, fullPages: (wal1.fpi - wal0.fpi) / list.length,
    };
  };
  // Statements the domain runs (the cold rows report statements per booking).
  let statements = 0;
  const counted = new Proxy(db, {
    get(target, prop) {
      if (prop === 'executeQuery') return (q: never) => (statements++, target.executeQuery(q));
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const kept = new BookingContextCache(100_000);
  const clock = new LocalClock();
  const createTexts = new Map<string, string>();
  const create = (j: (typeof jobs)[number], twoStatements = false) =>
    createAppointment(counted, principal, { appointment_type: 'providers', data: { start_time: j.start.toISOString(), visit_reason_id: j.reason, provider_location_id: j.pl, patient_type: 'new', patient } }, {
      clock, statementTexts: createTexts, contexts: kept, ...(twoStatements ? { coldInOneStatement: false } : {}),
    });

  if (coldOnly) {
    // Cold bookings: the first slot of each (provider-location, UTC day), nothing kept for it; the
    // two paths alternate (one statement, and the context read first), one zone met beforehand.
    const byDay = new Map<string, (typeof jobs)[number]>();
    for (const j of jobs) byDay.set(`${j.pl}|${Math.floor(j.start.getTime() / DAY)}`, byDay.get(`${j.pl}|${Math.floor(j.start.getTime() / DAY)}`) ?? j);
    const firsts = [...byDay.values()];
    for (const j of firsts.splice(0, 20)) await create(j);
    const per = Math.floor(firsts.length / 8);
    say(`cold: ${firsts.length} first bookings of a (provider-location, day), ${per} per row, zones met: ${[...kept.zones].join(', ')}`);
    say('| round | one statement: bookings/s | PostgreSQL µs | Node µs | statements | WAL kB | full pages | context read first: bookings/s | PostgreSQL µs | Node µs | statements | WAL kB | full pages |');
    say('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    const perBooking = () => {
      const n = statements / per;
      statements = 0;
      return n.toFixed(2);
    };
    for (let r = 0; r < 4; r++) {
      // The two paths take turns going first, and each takes the other's slice of bookings next round.
      const [a, b] = r % 2 ? [2 * per * r + per, 2 * per * r] : [2 * per * r, 2 * per * r + per];
      statements = 0;
      let one: Awaited<ReturnType<typeof row>> | undefined, two: Awaited<ReturnType<typeof row>> | undefined, oneStatements = '', twoStatements = '';
      // BENCH_COLD_MODE=one or two: that path alone (for a profile of it).
      const modes = process.env.BENCH_COLD_MODE ? [process.env.BENCH_COLD_MODE] : r % 2 ? ['two', 'one'] : ['one', 'two'];
      for (const which of modes) {
        if (which === 'one') {
          one = await row('create', firsts.slice(a, a + per));
          oneStatements = perBooking();
        } else {
          two = await row('create-two', firsts.slice(b, b + per));
          twoStatements = perBooking();
        }
      }
      if (!one || !two) {
        const m = one ?? two!;
        say(`| ${r + 1} | ${process.env.BENCH_COLD_MODE}: ${m.perSecond.toFixed(0)} | ${m.serverUs.toFixed(0)} | ${m.nodeUs.toFixed(0)} | ${oneStatements || twoStatements} | ${m.walKb.toFixed(1)} | ${m.fullPages.toFixed(2)} | | | | | | |`);
        continue;
      }
      const w = (x: typeof one) => `${x!.walKb.toFixed(1)} | ${x!.fullPages.toFixed(2)}`;
      say(`| ${r + 1} | ${one.perSecond.toFixed(0)} | ${one.serverUs.toFixed(0)} | ${one.nodeUs.toFixed(0)} | ${oneStatements} | ${w(one)} | ${two.perSecond.toFixed(0)} | ${two.serverUs.toFixed(0)} | ${two.nodeUs.toFixed(0)} | ${twoStatements} | ${w(two)} |`);
    }
  } else if (domainOnly) {
    const byDay = new Map<string, typeof jobs>();
    for (const j of jobs) {
      const k = `${j.pl}|${Math.floor(j.start.getTime() / DAY)}`;
      byDay.set(k, [...(byDay.get(k) ?? []), j]);
    }
    for (const g of byDay.values()) await create(g[0]!);
    const later = [...byDay.values()].flatMap((g) => g.slice(1));
    say(`warm: ${byDay.size} (provider-location, day) contexts kept, ${later.length} later slots`);
    say('| round | statement: bookings/s | PostgreSQL µs | Node µs | WAL kB | full pages | createAppointment: bookings/s | PostgreSQL µs | Node µs | WAL kB | full pages |');
    say('|---|---|---|---|---|---|---|---|---|---|---|');
    for (let r = 0; r < 3; r++) {
      const s0 = await row('booking', later.slice(3000 * r, 3000 * r + 1500));
      const c0 = await row('create', later.slice(3000 * r + 1500, 3000 * r + 3000));
      say(`| ${r + 1} | ${s0.perSecond.toFixed(0)} | ${s0.serverUs.toFixed(0)} | ${s0.nodeUs.toFixed(0)} | ${s0.walKb.toFixed(1)} | ${s0.fullPages.toFixed(2)} | ${c0.perSecond.toFixed(0)} | ${c0.serverUs.toFixed(0)} | ${c0.nodeUs.toFixed(0)} | ${c0.walKb.toFixed(1)} | ${c0.fullPages.toFixed(2)} |`);
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
