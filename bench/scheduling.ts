/**
 * Scheduling benchmarks (issue #8 §7).
 *
 * ```ts
 * runSchedulingBench({ baseUrl, token, db, seconds?, connections?, providerLocations? }): Promise<BenchRow[]>
 * schedulingScenarios({ baseUrl, token, db, ... }): Promise<Scenario[]>   // for bench/run.ts's harness
 * ```
 *
 * Given a running server (`baseUrl`), a client-credentials token with every scope and the server's
 * database, it seeds a directory of about `providerLocations` (default 10,000) provider-locations
 * into the token's developer's directory (skipped when it is already there), then measures with
 * autocannon:
 * - availability for 50 provider-locations × 7 days and × 31 days (one connection, so p50 is the
 *   service's latency; goals on PostgreSQL: median < 25 ms and < 100 ms);
 * - booking throughput, each request booking a distinct free slot (compare with the `insert`
 *   baseline; goal ≥ 0.3×);
 * - `GET /v1/appointments/{id}` (compare with the `select` baseline; goal ≥ 0.5×).
 * Returns one `{name, requestsPerSec, p50, p99}` row per scenario (latencies in ms).
 */
import { decodeJwt } from 'jose';
import { DateTime } from 'luxon';
import { sql } from 'kysely';
import type { Db } from '../src/db/database.js';
import type { Env } from '../src/db/schema.js';
import { computeAvailability } from '../src/domain/scheduling/availability.js';
import { generateDirectory } from '../src/domain/directory/seed.js';
import { writeDirectory } from '../src/domain/directory/write-directory.js';
import autocannon from 'autocannon';
import type { Scenario } from './harness.js';

export interface SchedulingBenchInput {
  baseUrl: string;
  token: string;
  db: Db;
  env?: Env;
  /** Target directory size (the generator makes ~1.25 provider-locations per provider). */
  providerLocations?: number;
}

export interface BenchRow {
  name: string;
  requestsPerSec: number;
  p50: number;
  p99: number;
}

const SEED = 808;

/** Seeds the directory for the token's developer unless it already holds `target` provider-locations. */
async function ensureDirectory(db: Db, env: Env, developerId: string, target: number): Promise<void> {
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
    // The bench patient carries no insurance: leave out provider-locations that require it.
    .where(sql<boolean>`NOT ('patient.insurance' = ANY(pl.required_fields))`)
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
  const queue: string[] = [];
  for (const [id, a] of free) for (const s of a.slots) queue.push(JSON.stringify(bookingBody(id, s.startTime, reason)));
  let next = 0;

  return [
    { name: 'availability 50 PLs × 7 days', baseline: 'select', path: availability(7), headers: auth, connections: 1 },
    { name: 'availability 50 PLs × 31 days', baseline: 'select', path: availability(31), headers: auth, connections: 1 },
    {
      name: 'POST /v1/appointments (distinct slots)',
      baseline: 'insert',
      method: 'POST',
      path: '/v1/appointments',
      headers: auth,
      bodies: () => queue[next++ % queue.length]!,
    },
    { name: 'GET /v1/appointments/{id}', baseline: 'select', path: `/v1/appointments/${readId}`, headers: auth },
  ];
}

function bookingBody(providerLocationId: string, startTime: string, visitReasonId: string) {
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

/**
 * Runs the scenarios with autocannon in this thread (per-request bodies are functions, which
 * autocannon's worker threads cannot take) and returns one row each (see the module comment).
 */
export async function runSchedulingBench(input: SchedulingBenchInput & { seconds?: number; connections?: number }): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const s of await schedulingScenarios(input)) {
    const result = await autocannon({
      url: `${input.baseUrl}${s.path}`,
      method: s.method ?? 'GET',
      headers: { ...(s.bodies ? { 'content-type': 'application/json' } : {}), ...s.headers },
      ...(s.bodies ? { requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: s.bodies!() }) }] } : {}),
      connections: s.connections ?? input.connections ?? 10,
      duration: input.seconds ?? 5,
    } as autocannon.Options);
    rows.push({ name: s.name, requestsPerSec: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99 });
  }
  return rows;
}
