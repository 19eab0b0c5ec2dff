/**
 * Scheduling benchmarks (issue #8 §7, issue #20 §9), run by `npm run bench` through bench/scenarios.ts.
 *
 * ```ts
 * schedulingScenarios({ baseUrl, token, db, engine, env?, providerLocations? }): Promise<Scenario[]>
 * ```
 *
 * Given a running server (`baseUrl`), a client-credentials token with every scope and the server's
 * database, it seeds a directory of about `providerLocations` (default 10,000) provider-locations
 * into the token's developer's directory (skipped when it is already there), and returns scenarios
 * (with their targets, printed PASS/FAIL) for bench/harness.ts to measure. Bookings use
 * provider-locations of many providers (one per provider: a provider's locations share its time),
 * each with a visit reason it offers, for a self-pay patient:
 * - availability for 50 provider-locations × 7 days and × 31 days (one connection, so p50 is the
 *   service's latency; goals on PostgreSQL: median < 25 ms and < 100 ms);
 * - availability of one provider-location in the default window, and the same spread over 500
 *   provider-locations (each request the next one);
 * - booking, warm: 500 provider-locations × 8 days whose booking contexts are kept (each pair booked
 *   once before the row), each request a distinct free slot of those pairs;
 * - booking, cold: each request the first booking of its provider-location and day (nothing kept to
 *   reuse), interleaved over ≥ 1,000 provider-locations;
 * - the booking's atomic write alone, as a reference without a goal: a bare Fastify handler running
 *   the service's own booking statement (`bookingStatement`) for given free slots, with no validation,
 *   schedule read, authentication or response schema. Its ratio to `insert` is the ceiling the
 *   booking scenarios' ratios cannot pass;
 * - `GET /v1/appointments/{id}` of one appointment, and over the ~4,000 appointments of the warm-up;
 * - `POST /v1/appointments/reschedule` of the warm-up's appointments, each moved twice (two rounds)
 *   to free slots of its provider-location four weeks later, at 10 connections, without a goal: a
 *   reschedule reads the appointment, its provider-location, durations and schedule, and writes.
 *   Its ratio is to `insert`, as the bookings'.
 * - booking, warm, at 10 connections with the service's background jobs running (the evaluator,
 *   webhook delivery, the summary refresh…, as `npm start` runs them beside the API; the other rows
 *   run without them), when `startJobs` and `later` are given: handed to `later` to run after every
 *   other group (what the jobs change reaches no other row). The jobs start before the row, first
 *   work off what the earlier rows left them (their bookings' evaluations and events, the stored
 *   summaries of every provider-location), then run beside the row's own bookings, and stop after it.
 * The rows without a fixed count run at each of the run's connection counts (10 and 32); booking
 * rows get one list of bodies per count, so no two rows book the same slot. Targets: issue #8 §7 on
 * PostgreSQL, issue #20 on each engine (`target` functions of the connection count).
 */
import Fastify from 'fastify';
import { decodeJwt } from 'jose';
import { DateTime } from 'luxon';
import { sql } from 'kysely';
import type { Db } from '../src/db/database.js';
import type { Env } from '../src/db/schema.js';
import { maintainTables } from '../src/db/table-maintenance.js';
import { contextDay } from '../src/domain/appointments/booking-context.js';
import { bookingStatement } from '../src/domain/appointments/create.js';
import type { PatientInput } from '../src/domain/appointments/patient-rules.js';
import { computeAvailability } from '../src/domain/availability/slot-lists.js';
import { loadProviderLocations } from '../src/domain/scheduling/schedule-data.js';
import { generateDirectory } from '../src/domain/directory/seed.js';
import { writeDirectory } from '../src/domain/directory/write/write-directory.js';
import { bookableRows } from './bookable.js';
import type { Scenario, Target } from './harness.js';
import type { BenchJobs } from './scenarios.js';

export interface SchedulingBenchInput {
  baseUrl: string;
  token: string;
  db: Db;
  engine: 'pglite' | 'postgres';
  /** The run's connection counts: booking rows get one list of bodies per count. */
  counts: number[];
  env?: Env;
  /** Target directory size (the generator makes ~1.25 provider-locations per provider). */
  providerLocations?: number;
  /** Starts the service's background jobs (bench/scenarios.ts); with `later`, a booking row runs with them. */
  startJobs?: () => BenchJobs;
  /** Takes a row to run after every other group's (the booking row with the background jobs). */
  later?: (row: Scenario) => void;
}

/** How long the background jobs may take to work off what the earlier rows left them. */
const JOBS_DRAIN_MS = 180_000;

const SEED = 808;
/** More distinct slots than any row books (a few thousand per second for 5 s). */
const MAX_BODIES = 60_000;
/** The warm booking rows: provider-locations × UTC days whose contexts are kept (under the cache's 5,000). */
const WARM_PLS = 500;
const WARM_DAYS = 8;
/** The cold booking rows: provider-locations whose first booking of a day each request is. */
const COLD_PLS = 2_000;
/** Free slots of each warm provider-location kept for the reschedule row: two moves of each of its WARM_DAYS appointments. */
const RESCHEDULE_SLOTS = 2 * WARM_DAYS;

/** Seeds the directory for the token's developer unless it already holds `target` provider-locations. */
export async function ensureDirectory(db: Db, env: Env, developerId: string, target: number): Promise<void> {
  const { n } = await db
    .selectFrom('developer_provider_locations')
    .select(sql<string>`count(*)`.as('n'))
    .where('developer_id', '=', developerId)
    .executeTakeFirstOrThrow();
  if (Number(n) >= target * 0.9) return;
  const doc = generateDirectory(Math.ceil(target / 1.25), SEED);
  await db.transaction().execute((trx) => writeDirectory(trx, env, doc, { developerId }));
  // A directory in service has planner statistics; a freshly seeded one needs them now.
  await sql`ANALYZE`.execute(db);
}

interface Bookable {
  id: string;
  providerId: string;
  reason: string;
}

/** Free slots (start times) of `pls`, by provider-location and UTC day (the booking context's day), for local days `from`..`to`. */
async function freeSlots(db: Db, env: Env, pls: Bookable[], from: string, to: string): Promise<Map<string, Map<number, string[]>>> {
  const byReason = new Map<string, string[]>();
  for (const p of pls) byReason.set(p.reason, [...(byReason.get(p.reason) ?? []), p.id]);
  const out = new Map<string, Map<number, string[]>>();
  for (const [reason, ids] of byReason) {
    const free = await computeAvailability(db, { env, providerLocationIds: ids, visitReasonId: reason, patientType: 'new', from, to });
    for (const [id, a] of free) {
      const days = new Map<number, string[]>();
      for (const slot of a.slots) {
        const day = contextDay(Date.parse(slot.startTime));
        days.set(day, [...(days.get(day) ?? []), slot.startTime]);
      }
      if (days.size) out.set(id, days);
    }
  }
  return out;
}

/** `items` dealt in turn into `n` lists (one per connection count), so no two rows share an item. */
function deal<T>(items: T[], n: number): T[][] {
  const lists: T[][] = Array.from({ length: n }, () => []);
  items.forEach((item, i) => lists[i % n]!.push(item));
  return lists;
}

/** Books each body with `concurrency` requests at a time; returns the appointment ids of those booked. */
async function bookAll(baseUrl: string, headers: Record<string, string>, bodies: string[], concurrency: number): Promise<{ ids: string[]; failed: number; firstFailure?: string }> {
  const ids: string[] = [];
  let failed = 0;
  let firstFailure: string | undefined;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        // A kept-alive socket the server has just closed fails the request before it is sent: once more.
        const send = () => fetch(`${baseUrl}/v1/appointments`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
        const res = await send().catch(send);
        const text = await res.text();
        if (res.ok) ids.push((JSON.parse(text) as { data: { appointment_id: string } }).data.appointment_id);
        else {
          failed++;
          firstFailure ??= `${res.status} ${text.slice(0, 300)}`;
        }
      }
    }),
  );
  return { ids, failed, ...(firstFailure ? { firstFailure } : {}) };
}

/**
 * Planner statistics of the booking tables as the service keeps them in service: its
 * table-maintenance pass (the job `npm start` runs every 15 s on PGlite, src/db/table-maintenance.ts),
 * which applies autovacuum's thresholds, as autovacuum does on PostgreSQL within its naptime. The
 * bench runs no background jobs, and a statement planned for an empty `appointments` table scans it
 * once it holds thousands (GET /v1/appointments/{id} on PostgreSQL: 214 req/s instead of 3,783).
 */
async function analyzeBookings(db: Db): Promise<void> {
  await maintainTables(db);
}

/** Prepares data and returns the scenarios (paths relative to `baseUrl`). */
export async function schedulingScenarios(input: SchedulingBenchInput): Promise<Scenario[]> {
  const env = input.env ?? 'sandbox';
  const postgres = input.engine === 'postgres';
  const developerId = String(decodeJwt(input.token).dev);
  await ensureDirectory(input.db, env, developerId, input.providerLocations ?? 10_000);
  const auth = { authorization: `Bearer ${input.token}` };
  const say = (line: string) => process.stdout.write(`  [scheduling] ${line}\n`);

  const rows = await bookableRows(input.db, developerId);
  const bookable = [...new Map(rows.map((r) => [r.provider_id, { id: r.id, providerId: r.provider_id, reason: r.reason }])).values()];
  const reasonOf = new Map(bookable.map((b) => [b.id, b.reason]));

  // Availability: 50 provider-locations of one visit reason; one provider-location; 500 of them in turn.
  const reason = 'pc_family_medicine_1';
  const fifty = bookable.filter((b) => b.reason === reason).slice(0, 50).map((b) => b.id);
  const start = DateTime.utc().plus({ days: 1 }).toISODate()!;
  const availability = (ids: string[], visitReason: string, days?: number) =>
    `/v1/provider_locations/availability?${new URLSearchParams({
      provider_location_ids: ids.join(','),
      visit_reason_id: visitReason,
      patient_type: 'new',
      ...(days ? { start_date_in_provider_local_time: start, end_date_in_provider_local_time: DateTime.fromISO(start).plus({ days: days - 1 }).toISODate()! } : {}),
    })}`;

  // Booking bodies. Warm: WARM_PLS provider-locations × WARM_DAYS UTC days, the first slot of each
  // pair booked now (its context is then kept), the rest in the rows, interleaved over the pairs.
  // Cold: the first free slot of each (provider-location, day) of COLD_PLS others, day by day.
  const first = DateTime.utc().plus({ days: 2 });
  const warmFree = await freeSlots(input.db, env, bookable.slice(0, WARM_PLS * 2), first.toISODate()!, first.plus({ days: WARM_DAYS + 1 }).toISODate()!);
  const warmPls = [...warmFree.keys()].slice(0, WARM_PLS);
  const warmPairs = warmPls.flatMap((id) => [...warmFree.get(id)!].sort(([a], [b]) => a - b).slice(1, WARM_DAYS + 1).map(([, slots]) => ({ id, slots })));
  const body = (id: string, startTime: string) => JSON.stringify(bookingBody(id, startTime, reasonOf.get(id)!));
  const warmUp = warmPairs.map((p) => body(p.id, p.slots[0]!));
  const warm: string[] = [];
  for (let i = 1; warm.length < MAX_BODIES && warmPairs.some((p) => i < p.slots.length); i++) {
    for (const p of warmPairs) if (i < p.slots.length && warm.length < MAX_BODIES) warm.push(body(p.id, p.slots[i]!));
  }
  const warmSet = new Set(warmPls);
  const coldPlsAll = bookable.filter((b) => !warmSet.has(b.id) && !warmFree.has(b.id)).slice(0, COLD_PLS);
  const coldFree = await freeSlots(input.db, env, coldPlsAll, first.toISODate()!, first.plus({ days: 28 }).toISODate()!);
  const coldDays = [...new Set([...coldFree.values()].flatMap((d) => [...d.keys()]))].sort((a, b) => a - b);
  const cold: string[] = [];
  for (const day of coldDays) for (const [id, days] of coldFree) if (days.has(day) && cold.length < MAX_BODIES) cold.push(body(id, days.get(day)![0]!));
  say(`${bookable.length} bookable provider-locations (one per provider); warm rows: ${warmPls.length} provider-locations × ${WARM_DAYS} days, ${warm.length} slots; cold rows: ${coldFree.size} provider-locations, ${cold.length} first slots of a day`);

  // One appointment to read (`GET /v1/appointments/{id}`); the warm-up's ~4,000 are read in turn.
  // (A slot of the first day of a warm provider-location: no row books those.)
  const firstWarm = warmPls[0]!;
  const readSlot = [...warmFree.get(firstWarm)!].sort(([a], [b]) => a - b)[0]![1][0]!;
  const readOne = await bookAll(input.baseUrl, auth, [body(firstWarm, readSlot)], 1);
  if (!readOne.ids[0]) throw new Error(`could not book the appointment to read: ${readOne.firstFailure}`);
  const readId = readOne.ids[0];
  const warmIds: string[] = [];
  const bookWarmUp = async () => {
    const t0 = performance.now();
    const booked = await bookAll(input.baseUrl, auth, warmUp, 8);
    warmIds.push(...booked.ids.map((id) => `/v1/appointments/${id}`));
    say(`warm-up: ${booked.ids.length} bookings (${booked.failed} refused) in ${((performance.now() - t0) / 1000).toFixed(1)} s keep ${warmUp.length} booking contexts`);
    if (booked.firstFailure) say(`warm-up: first refusal: ${booked.firstFailure}`);
    if (booked.ids.length === 0) throw new Error('the warm-up booked nothing');
    await analyzeBookings(input.db);
  };
  // Once, before the first row that needs it (the warm rows, or the reschedule row when run alone).
  let warmedUp: Promise<void> | undefined;
  const warmUpFirst = () => (warmedUp ??= bookWarmUp());

  // The booking's atomic write alone (the ceiling of booking throughput): a bare Fastify handler that
  // runs the service's own booking statement (`bookingStatement`) for a slot it is given, without the
  // service's validation, schedule read, authentication or response schema. Its slots are those of
  // the warm provider-locations four weeks later, so no other row competes for them.
  const laterFree = await freeSlots(input.db, env, bookable.filter((b) => warmSet.has(b.id)), first.plus({ days: 29 }).toISODate()!, first.plus({ days: 57 }).toISODate()!);
  const writeBodies: string[] = [];
  // The last RESCHEDULE_SLOTS of each are kept for the reschedule row; the write row books the others.
  const rescheduleSlots = new Map<string, string[]>();
  const laterLists = [...laterFree].map(([id, days]) => {
    const slots = [...days.values()].flat();
    rescheduleSlots.set(id, slots.splice(Math.max(0, slots.length - RESCHEDULE_SLOTS)));
    return { id, slots };
  });
  for (let i = 0; writeBodies.length < MAX_BODIES && laterLists.some((l) => i < l.slots.length); i++) {
    for (const l of laterLists) if (i < l.slots.length && writeBodies.length < MAX_BODIES) writeBodies.push(JSON.stringify({ pl: l.id, start: l.slots[i]! }));
  }
  const contexts = await loadProviderLocations(input.db, env, [...laterFree.keys()]);
  const durations = new Map((await input.db.selectFrom('visit_reasons').select(['id', 'duration_new_minutes']).where('env', '=', env).execute()).map((r) => [r.id, r.duration_new_minutes]));
  const claims = decodeJwt(input.token);
  const principal = { kind: 'client' as const, env, developerId, clientId: String(claims.client_id), scopes: new Set<never>() };
  const texts = new Map<string, string>();
  const patient = bookingBody('', '', '').data.patient as PatientInput;
  // The versions the service's own writes check (migration 0010): read once, nothing changes them meanwhile.
  const versions = {
    directory: (await sql<{ v: string }>`SELECT version::text AS v FROM directory_version`.execute(input.db)).rows[0]!.v,
    calendars: new Map((await sql<{ p: string; v: string }>`SELECT provider_id AS p, version::text AS v FROM calendar_versions WHERE env = ${env}`.execute(input.db)).rows.map((r) => [r.p, r.v])),
  };
  const writer = Fastify({ logger: false });
  writer.post<{ Body: { pl: string; start: string } }>('/booking-write', async (req) => {
    const start = new Date(req.body.start);
    const pl = contexts.get(req.body.pl)!;
    const visitReasonId = reasonOf.get(req.body.pl)!;
    const statement = bookingStatement(texts, {
      principal, pl, patient, visitReasonId, patientType: 'new',
      start, end: new Date(start.getTime() + durations.get(visitReasonId)! * 60_000), now: new Date(),
      versions: { directory: versions.directory, calendar: versions.calendars.get(pl.providerId) ?? '0' },
    });
    const { rows: written } = await input.db.executeQuery<{ j: [string, ...unknown[]] }>(statement);
    return { id: written[0]!.j[0] };
  });
  const writerUrl = await writer.listen({ port: 0, host: '127.0.0.1' });
  writer.server.unref();

  const counts = input.counts;
  // One list of warm slots per count, and one more for the row with the background jobs.
  const warmLists = deal(warm, counts.length + (input.startJobs && input.later ? 1 : 0));
  const coldLists = deal(cold, counts.length);
  // Issue #20's goals: booking at 10 clients, ≥ 0.3 × insert cold and ≥ 0.5 × warm on PostgreSQL;
  // on the embedded engine ≥ 0.3 × its insert with p99 < 50 ms.
  const bookingTarget = (c: number, warmGoal: boolean): Target | undefined => {
    if (c !== 10) return undefined;
    if (!postgres) return { minRatio: 0.3, maxP99Ms: 50, label: 'issue #20, embedded booking at 10 clients' };
    return warmGoal ? { minRatio: 0.5, label: 'issue #20, warm booking at 10 clients' } : { minRatio: 0.3, label: 'issue #20 (and #8 §7), cold booking at 10 clients' };
  };
  const bookingRows = (kind: 'warm' | 'cold', lists: string[][], title: string): Scenario[] =>
    counts.map((c, i) => {
      const target = bookingTarget(c, kind === 'warm');
      const before = kind === 'warm' && i === 0 ? { before: warmUpFirst } : {};
      return { name: `${title} @ ${c}`, baseline: 'insert', method: 'POST', path: '/v1/appointments', headers: auth, bodies: lists[i]!, connections: c, ...before, ...(target ? { target } : {}) };
    });

  // Reschedules: the warm-up's appointments, each moved (in two rounds, the second after every
  // first) to a free slot of its provider-location four weeks later kept for this row.
  const rescheduleBodies: string[] = [];
  const rescheduleBefore = async () => {
    await warmUpFirst();
    const ids = warmIds.map((p) => p.slice('/v1/appointments/'.length));
    const rows = await input.db.selectFrom('appointments').select(['id', 'provider_location_id']).where('id', 'in', ids).orderBy('start_time').execute();
    const taken = new Map<string, number>();
    const rounds: string[][] = [[], []];
    for (const r of rows) {
      const k = taken.get(r.provider_location_id) ?? 0;
      const free = rescheduleSlots.get(r.provider_location_id) ?? [];
      if (free.length < 2 * (k + 1)) continue;
      taken.set(r.provider_location_id, k + 1);
      for (const round of [0, 1]) rounds[round]!.push(JSON.stringify({ appointment_id: r.id, start_time: free[2 * k + round]! }));
    }
    rescheduleBodies.push(...rounds.flat());
    say(`reschedules: ${rounds[0]!.length} appointments, two moves each`);
  };

  // The row with the background jobs comes after the cold rows, whose contexts pushed the warm ones
  // out of the kept 5,000, and after the directory group's imports, which moved the directory's
  // version: asking for the warm-up's slots again (still held, so refused) keeps each pair's context again.
  const keepWarmContexts = async (): Promise<string> => {
    await warmUpFirst();
    const again = await bookAll(input.baseUrl, auth, warmUp, 8);
    return `${warmUp.length} warm-up slots asked again (${again.ids.length} booked, ${again.failed} refused) to keep their contexts`;
  };
  const spread = warmPls.slice(0, 500).map((id) => availability([id], reasonOf.get(id)!));
  const scenarios: Scenario[] = [
    { name: 'availability 50 PLs × 7 days', baseline: 'select', path: availability(fifty, reason, 7), headers: auth, connections: 1, ...(postgres ? { target: { maxP50Ms: 25, label: 'issue #8 §7, on PostgreSQL' } } : {}) },
    { name: 'availability 50 PLs × 31 days', baseline: 'select', path: availability(fifty, reason, 31), headers: auth, connections: 1, ...(postgres ? { target: { maxP50Ms: 100, label: 'issue #8 §7, on PostgreSQL' } } : {}) },
    {
      name: 'availability 1 PL, default window',
      baseline: 'select',
      path: spread[0]!,
      headers: auth,
      target: (c) => (!postgres && c === 32 ? { maxP99Ms: 50, label: 'issue #20, embedded availability at 32 connections' } : undefined),
    },
    { name: `availability 1 PL, default window, ${spread.length} PLs in turn`, baseline: 'select', path: spread[0]!, paths: spread, headers: auth },
    // Warm before cold: the cold rows' contexts would push the warm ones out of the kept 5,000.
    ...bookingRows('warm', warmLists, `POST /v1/appointments, warm (${warmPls.length} PLs × ${WARM_DAYS} days, contexts kept)`),
    ...bookingRows('cold', coldLists, `POST /v1/appointments, cold (first booking of a PL and day, ${coldFree.size} PLs)`),
    { name: "booking's atomic write alone (bare handler, reference)", baseline: 'insert', method: 'POST', path: '/booking-write', url: `${writerUrl}/booking-write`, bodies: writeBodies, connections: 10 },
    {
      name: 'GET /v1/appointments/{id}',
      before: () => analyzeBookings(input.db),
      baseline: postgres ? 'select' : 'bare',
      path: `/v1/appointments/${readId}`,
      headers: auth,
      target: postgres ? { minRatio: 0.5, label: 'issue #20 (and #8 §7), at 10 and 32 connections' } : { minRatio: 0.15, label: 'issue #20, embedded read against bare Fastify' },
    },
    {
      name: `GET /v1/appointments/{id}, the warm-up's ${warmUp.length} appointments in turn`,
      baseline: postgres ? 'select' : 'bare',
      path: `/v1/appointments/${readId}`,
      paths: warmIds,
      headers: auth,
    },
    // After the reads: it moves the appointments they read.
    {
      name: "POST /v1/appointments/reschedule, the warm-up's appointments to free slots four weeks later",
      before: rescheduleBefore,
      baseline: 'insert',
      method: 'POST',
      path: '/v1/appointments/reschedule',
      headers: auth,
      bodies: rescheduleBodies,
      connections: 10,
    },
  ];
  if (input.startJobs && input.later) {
    input.later(withJobsRow(input.db, input.startJobs, say, keepWarmContexts, auth, warmLists[counts.length]!, `POST /v1/appointments, warm (${warmPls.length} PLs × ${WARM_DAYS} days, contexts kept), the background jobs running`));
  }
  return scenarios;
}

/** Due work the background jobs have not done yet: evaluations of bookings, webhook events to settle. */
async function jobsBacklog(db: Db): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT
      (SELECT count(*) FROM appointments WHERE evaluate_after IS NOT NULL AND evaluate_after <= now())
    + (SELECT count(*) FROM outbox_events WHERE status = 'pending' AND next_attempt_at <= now()) AS n`.execute(db);
  return Number(rows[0]!.n);
}

/** The summary refresh job's passes and items so far (src/jobs/availability-summary-refresh.ts). */
const refreshStats = (jobs: BenchJobs) => jobs.stats().find((s) => s.job === 'availability-summary-refresh');

/**
 * The warm booking row with the background jobs running as `npm start` runs them: started before it
 * and given time to work off what they find (the earlier rows' bookings and events; every
 * provider-location's stored summary, which none of the earlier rows kept), so that the row meets
 * them as a service in use runs them; stopped after it.
 */
function withJobsRow(
  db: Db,
  startJobs: () => BenchJobs,
  say: (line: string) => void,
  keepWarmContexts: () => Promise<string>,
  headers: Record<string, string>,
  bodies: string[],
  name: string,
): Scenario {
  let running: BenchJobs | undefined;
  return {
    name,
    baseline: 'insert',
    method: 'POST',
    path: '/v1/appointments',
    headers,
    bodies,
    connections: 10,
    before: async () => {
      say(`background jobs: ${await keepWarmContexts()}`);
      const jobs = (running = startJobs());
      const t0 = performance.now();
      const first = await jobsBacklog(db);
      let left = first;
      // Caught up: no due evaluation or event, and a summary refresh pass has ended that found nothing to refresh.
      let seen = refreshStats(jobs);
      let refreshIdle = false;
      while ((left > 0 || !refreshIdle) && performance.now() - t0 < JOBS_DRAIN_MS) {
        await new Promise((r) => setTimeout(r, 250));
        left = await jobsBacklog(db);
        const now = refreshStats(jobs);
        if (!now) refreshIdle = true;
        else if (now.passes > (seen?.passes ?? 0)) {
          refreshIdle = now.items === (seen?.items ?? 0);
          seen = now;
        }
      }
      const summaries = refreshStats(jobs)?.items ?? 0;
      say(`background jobs: started; ${first} due evaluations and events from the earlier rows and ${summaries} summaries worked off in ${((performance.now() - t0) / 1000).toFixed(1)} s${left > 0 || !refreshIdle ? ' (not all: the wait ended)' : ''}`);
    },
    after: async () => {
      const left = await jobsBacklog(db);
      await running?.stop();
      say(`background jobs: stopped (${left} due evaluations and events left by the row)`);
    },
  };
}

export function bookingBody(providerLocationId: string, startTime: string, visitReasonId: string) {
  return {
    appointment_type: 'providers',
    data: {
      start_time: startTime,
      visit_reason_id: visitReasonId,
      provider_location_id: providerLocationId,
      patient_type: 'new',
      patient: {
        first_name: 'Bench',
        last_name: 'Patient',
        date_of_birth: '1980-01-01',
        sex_at_birth: 'female',
        phone_number: '2125550123',
        email_address: 'bench@example.org',
        patient_address: { address1: '1 Main St', city: 'New York', state: 'NY', zip_code: '10001' },
      },
    },
  };
}
