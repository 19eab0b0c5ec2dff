/**
 * Scheduling benchmarks (issue #8 §7), run by `npm run bench` through bench/scenarios.ts.
 *
 * ```ts
 * schedulingScenarios({ baseUrl, token, db, env?, providerLocations? }): Promise<Scenario[]>
 * ```
 *
 * Given a running server (`baseUrl`), a client-credentials token with every scope and the server's
 * database, it seeds a directory of about `providerLocations` (default 10,000) provider-locations
 * into the token's developer's directory (skipped when it is already there), and returns scenarios
 * (with their targets, printed PASS/FAIL) for bench/harness.ts to measure:
 * - availability for 50 provider-locations × 7 days and × 31 days (one connection, so p50 is the
 *   service's latency; goals on PostgreSQL: median < 25 ms and < 100 ms);
 * - booking throughput, each request booking a distinct free slot (compare with the `insert`
 *   baseline; goal ≥ 0.3×);
 * - the booking's atomic write alone, as a reference without a goal: a bare Fastify handler running
 *   the service's own booking statement (`bookingStatement`) for given free slots, with no validation,
 *   schedule read, authentication or response schema. Its ratio to `insert` is the ceiling the
 *   booking scenario's ratio cannot pass;
 * - `GET /v1/appointments/{id}` (compare with the `select` baseline; goal ≥ 0.5×).
 * Booking bodies are precomputed (one per free slot, up to `MAX_BODIES`), so the harness can hand
 * them to autocannon's worker thread.
 */
import Fastify from 'fastify';
import { decodeJwt } from 'jose';
import { DateTime } from 'luxon';
import { sql } from 'kysely';
import type { Db } from '../src/db/database.js';
import type { Env } from '../src/db/schema.js';
import { bookingStatement } from '../src/domain/appointments/create.js';
import { computeAvailability } from '../src/domain/availability/slot-lists.js';
import { loadProviderLocations } from '../src/domain/scheduling/schedule-data.js';
import { generateDirectory } from '../src/domain/directory/seed.js';
import { writeDirectory } from '../src/domain/directory/write/write-directory.js';
import type { Scenario } from './harness.js';

export interface SchedulingBenchInput {
  baseUrl: string;
  token: string;
  db: Db;
  env?: Env;
  /** Target directory size (the generator makes ~1.25 provider-locations per provider). */
  providerLocations?: number;
}

const SEED = 808;
/** More distinct slots than any run books (10 connections × 5 s at a few thousand per second). */
const MAX_BODIES = 60_000;

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

/** Prepares data and returns the scenarios (paths relative to `baseUrl`). */
export async function schedulingScenarios(input: SchedulingBenchInput): Promise<Scenario[]> {
  const env = input.env ?? 'sandbox';
  const developerId = String(decodeJwt(input.token).dev);
  await ensureDirectory(input.db, env, developerId, input.providerLocations ?? 10_000);
  const auth = { authorization: `Bearer ${input.token}` };

  // 50 provider-locations of one specialty (they accept its default visit reason).
  const reason = 'pc_family_medicine_1';
  const pls = await input.db
    .selectFrom('developer_provider_locations as d')
    .innerJoin('provider_locations as pl', (j) => j.onRef('pl.env', '=', 'd.env').onRef('pl.id', '=', 'd.provider_location_id'))
    .innerJoin('providers as p', (j) => j.onRef('p.env', '=', 'pl.env').onRef('p.id', '=', 'pl.provider_id'))
    .select(['pl.id', 'pl.provider_id'])
    .where('d.developer_id', '=', developerId)
    .where('pl.active', '=', true)
    .where(sql<boolean>`${reason} = ANY(p.visit_reason_ids)`)
    // The bench patient carries no insurance (a self-pay booking): leave out provider-locations that
    // require insurance or do not take self-pay bookings.
    .where(sql<boolean>`NOT ('patient.insurance' = ANY(pl.required_fields))`)
    .where(sql<boolean>`'self_pay' = ANY(pl.accepts_booking_requests_from)`)
    .orderBy('pl.id')
    .execute();
  const fifty = pls.slice(0, 50).map((p) => p.id);
  const start = DateTime.utc().plus({ days: 1 }).toISODate()!;
  const availability = (days: number) =>
    `/v1/provider_locations/availability?${new URLSearchParams({
      provider_location_ids: fifty.join(','),
      visit_reason_id: reason,
      patient_type: 'new',
      start_date_in_provider_local_time: start,
      end_date_in_provider_local_time: DateTime.fromISO(start).plus({ days: days - 1 }).toISODate()!,
    })}`;

  // Distinct free slots: one provider-location per provider (a provider's locations share its time).
  const onePerProvider = [...new Map(pls.map((p) => [p.provider_id, p.id])).values()];
  const free = await computeAvailability(input.db, {
    env, providerLocationIds: onePerProvider, visitReasonId: reason, patientType: 'new',
    from: DateTime.utc().plus({ days: 2 }).toISODate()!, to: DateTime.utc().plus({ days: 30 }).toISODate()!,
  });

  // One appointment to read.
  const [readPl, readAvailability] = [...free].find(([, a]) => a.slots.length > 0)!;
  const readSlot = readAvailability.slots.pop()!;
  const readRes = await fetch(`${input.baseUrl}/v1/appointments`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(bookingBody(readPl, readSlot.startTime, reason)),
  });
  const readId = ((await readRes.json()) as { data: { appointment_id: string } }).data.appointment_id;
  // Interleave provider-locations (one slot of each in turn), as real traffic spreads over providers.
  const queue: string[] = [];
  const lists = [...free].map(([id, a]) => ({ id, slots: a.slots }));
  for (let i = 0; queue.length < MAX_BODIES && lists.some((l) => i < l.slots.length); i++) {
    for (const l of lists) if (i < l.slots.length && queue.length < MAX_BODIES) queue.push(JSON.stringify(bookingBody(l.id, l.slots[i]!.startTime, reason)));
  }
  process.stdout.write(`  [scheduling] ${pls.length} provider-locations accept ${reason}; ${queue.length} distinct free slots prepared for booking\n`);

  // The booking's atomic write alone (the ceiling of booking throughput): a bare Fastify handler that
  // runs the service's own booking statement (`bookingStatement`) for a slot it is given, without the
  // service's validation, schedule read, authentication or response schema. Its slots are those of
  // the next four weeks, so the two booking scenarios never compete for a slot.
  const later = await computeAvailability(input.db, {
    env, providerLocationIds: onePerProvider, visitReasonId: reason, patientType: 'new',
    from: DateTime.utc().plus({ days: 31 }).toISODate()!, to: DateTime.utc().plus({ days: 59 }).toISODate()!,
  });
  const writeBodies: string[] = [];
  const laterLists = [...later].map(([id, a]) => ({ id, slots: a.slots }));
  for (let i = 0; writeBodies.length < MAX_BODIES && laterLists.some((l) => i < l.slots.length); i++) {
    for (const l of laterLists) if (i < l.slots.length && writeBodies.length < MAX_BODIES) writeBodies.push(JSON.stringify({ pl: l.id, start: l.slots[i]!.startTime }));
  }
  const contexts = await loadProviderLocations(input.db, env, [...later.keys()]);
  const durationNew = (await input.db.selectFrom('visit_reasons').select('duration_new_minutes').where('env', '=', env).where('id', '=', reason).executeTakeFirstOrThrow()).duration_new_minutes;
  const claims = decodeJwt(input.token);
  const principal = { kind: 'client' as const, env, developerId, clientId: String(claims.client_id), scopes: new Set<never>() };
  const texts = new Map<string, string>();
  const patient = JSON.parse(queue[0]!).data.patient;
  // The versions the service's own writes check (migration 0010): read once, nothing changes them meanwhile.
  const versions = {
    directory: (await sql<{ v: string }>`SELECT version::text AS v FROM directory_version`.execute(input.db)).rows[0]!.v,
    calendars: new Map((await sql<{ p: string; v: string }>`SELECT provider_id AS p, version::text AS v FROM calendar_versions WHERE env = ${env}`.execute(input.db)).rows.map((r) => [r.p, r.v])),
  };
  const writer = Fastify({ logger: false });
  writer.post<{ Body: { pl: string; start: string } }>('/booking-write', async (req) => {
    const start = new Date(req.body.start);
    const pl = contexts.get(req.body.pl)!;
    const statement = bookingStatement(texts, {
      principal, pl, patient, visitReasonId: reason, patientType: 'new',
      start, end: new Date(start.getTime() + durationNew * 60_000), now: new Date(),
      versions: { directory: versions.directory, calendar: versions.calendars.get(pl.providerId) ?? '0' },
    });
    const { rows } = await input.db.executeQuery<{ j: [string, ...unknown[]] }>(statement);
    return { id: rows[0]!.j[0] };
  });
  const writerUrl = await writer.listen({ port: 0, host: '127.0.0.1' });
  writer.server.unref();

  return [
    { name: 'availability 50 PLs × 7 days', baseline: 'select', path: availability(7), headers: auth, connections: 1, target: { maxP50Ms: 25, label: 'issue #8 §7, on PostgreSQL' } },
    { name: 'availability 50 PLs × 31 days', baseline: 'select', path: availability(31), headers: auth, connections: 1, target: { maxP50Ms: 100, label: 'issue #8 §7, on PostgreSQL' } },
    {
      name: 'POST /v1/appointments (distinct slots)',
      baseline: 'insert',
      method: 'POST',
      path: '/v1/appointments',
      headers: auth,
      bodies: queue,
      target: { minRatio: 0.3, label: 'issue #8 §7' },
    },
    {
      name: "booking's atomic write alone (bare handler, reference)",
      baseline: 'insert',
      method: 'POST',
      path: '/booking-write',
      url: `${writerUrl}/booking-write`,
      bodies: writeBodies,
    },
    { name: 'GET /v1/appointments/{id}', baseline: 'select', path: `/v1/appointments/${readId}`, headers: auth, target: { minRatio: 0.5, label: 'issue #8 §7' } },
  ];
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
