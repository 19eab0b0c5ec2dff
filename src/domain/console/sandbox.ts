/**
 * Sandbox tools of the developer console (docs/console.md, "Sandbox tools"): reset the developer's
 * sandbox (its appointments and everything hanging off them, its patients, webhook events and
 * deliveries, Idempotency-Key records and request log; never another developer's rows), and run a
 * fixture provider-location's fixed outcome (docs/api/sandbox.md#fixture-provider-locations) by
 * booking a test patient through the normal booking code, so the outcome and its webhook follow as
 * they would for the developer's own app. The sandbox only: production refuses both.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { createAppointment } from '../appointments/create.js';
import type { BookingOutcomePolicy } from '../appointments/outcome-policy.js';
import type { AttachmentStore } from '../attachments/store.js';
import type { PatientInput } from '../appointments/patient-rules.js';
import { rescheduleAppointment } from '../appointments/reschedule.js';
import { computeAvailability } from '../availability/slot-lists.js';
import { LocalClock } from '../scheduling/local-time.js';
import type { ClientPrincipal } from '../credentials/principal.js';
import { SANDBOX_FIXTURES } from '../directory/sandbox-fixtures.js';
import { conflict, DomainError, notFound } from '../errors.js';
import { assertDeveloper } from './webhooks.js';

/** A sandbox tool asked of production: refused whoever asks. */
function sandboxOnly(env: Env): void {
  if (env !== 'sandbox') throw new DomainError('refused', [{ message: 'sandbox tools exist only in the sandbox' }]);
}

export interface ResetCounts {
  appointments: number;
  patients: number;
  holds: number;
  attachments: number;
  outbox_events: number;
  webhook_deliveries: number;
  idempotency_keys: number;
  request_log: number;
}

/**
 * Deletes the developer's sandbox data in one transaction, children before parents (docs/console.md,
 * "Sandbox tools"); answers how many rows of each kind went. The receiver, credentials, directory,
 * usage counters and the audit log are kept. Throws `refused` outside the sandbox.
 * Attachment files go after the commit (docs/decisions/0016-attachment-files.md): a crash in between
 * leaves files no row names, which the start-up sweep removes.
 */
export async function resetSandbox(db: Db, env: Env, developerId: string, attachments: AttachmentStore): Promise<ResetCounts> {
  sandboxOnly(env);
  await assertDeveloper(db, env, developerId);
  let files: string[] = [];
  const counts = await db.transaction().execute(async (trx) => {
    const count = (r: { numDeletedRows: bigint }) => Number(r.numDeletedRows);
    const mine = trx.selectFrom('appointments').select('id').where('developer_id', '=', developerId).where('env', '=', env);
    const webhook_deliveries = count(await trx.deleteFrom('webhook_deliveries').where('developer_id', '=', developerId).where('env', '=', env).executeTakeFirstOrThrow());
    const outbox_events = count(await trx.deleteFrom('outbox_events').where('developer_id', '=', developerId).where('env', '=', env).executeTakeFirstOrThrow());
    const deleted = await trx.deleteFrom('attachments').where('developer_id', '=', developerId).where('env', '=', env).returning(['id', sql<boolean>`content IS NULL`.as('in_store')]).execute();
    files = deleted.filter((d) => d.in_store).map((d) => d.id);
    const holds = count(await trx.deleteFrom('appointment_holds').where('appointment_id', 'in', mine).executeTakeFirstOrThrow());
    const appointments = count(await trx.deleteFrom('appointments').where('developer_id', '=', developerId).where('env', '=', env).executeTakeFirstOrThrow());
    const patients = count(await trx.deleteFrom('patients').where('developer_id', '=', developerId).where('env', '=', env).executeTakeFirstOrThrow());
    const idempotency_keys = count(await trx.deleteFrom('idempotency_keys').where('developer_id', '=', developerId).where('env', '=', env).executeTakeFirstOrThrow());
    const request_log = count(await trx.deleteFrom('request_log').where('developer_id', '=', developerId).where('env', '=', env).executeTakeFirstOrThrow());
    return { appointments, patients, holds, attachments: deleted.length, outbox_events, webhook_deliveries, idempotency_keys, request_log };
  });
  await attachments.remove(files);
  return counts;
}

export type FixtureName = 'pending' | 'failed' | 'manual' | 'reschedule-failed';

export interface FixtureInfo {
  name: FixtureName;
  provider_location_id: string;
  /** What running it does, and what follows. */
  outcome: string;
  /** Whether a webhook reaches the receiver without anyone else acting. */
  webhook: boolean;
}

/** The sandbox fixtures a developer can run (docs/api/sandbox.md#fixture-provider-locations). */
export const FIXTURES: readonly FixtureInfo[] = [
  {
    name: 'failed', provider_location_id: SANDBOX_FIXTURES.failed, webhook: true,
    outcome: 'books a test patient; the service then fails the booking (booking_failed) and sends an `updated` webhook with appointment.status',
  },
  {
    name: 'reschedule-failed', provider_location_id: SANDBOX_FIXTURES.rescheduleFailed, webhook: true,
    outcome: 'books a test patient and reschedules to the next slot; the service then fails the reschedule (reschedule_failed, the first time kept) and sends an `updated` webhook with appointment.status',
  },
  {
    name: 'pending', provider_location_id: SANDBOX_FIXTURES.pending, webhook: false,
    outcome: 'books a test patient; the booking stays pending_booking (the service never settles it); no webhook until a provider-side move',
  },
  {
    name: 'manual', provider_location_id: SANDBOX_FIXTURES.manual, webhook: false,
    outcome: 'books a test patient at a manual-confirmation provider; it waits in pending_booking for a confirmation (your own confirm sends no webhook; the practice or the operator confirming does)',
  },
];

/** The fixtures (docs/console.md, "Sandbox tools"). Throws `refused` outside the sandbox. */
export function listFixtures(env: Env): FixtureInfo[] {
  sandboxOnly(env);
  return [...FIXTURES];
}

/** How many days ahead a fixture run looks for a free time. */
const FIXTURE_SEARCH_DAYS = 30;

/** The test patient fixture runs book (made-up data). */
const TEST_PATIENT: PatientInput = {
  developer_patient_id: 'sandbox-fixture-run',
  first_name: 'Fixture',
  last_name: 'Patient',
  date_of_birth: '1980-01-01',
  sex_at_birth: 'female',
  phone_number: '2125550199',
  email_address: 'fixture.patient@example.org',
  patient_address: { address1: '1 Fixture Way', city: 'New York', state: 'NY', zip_code: '10001' },
};

/** The developer's machine credential as a principal (fixture runs act as the developer's own app). */
async function machinePrincipal(db: Db, env: Env, developerId: string): Promise<ClientPrincipal> {
  const client = await db
    .selectFrom('oauth_clients')
    .select(['client_id', 'scopes'])
    .where('developer_id', '=', developerId)
    .where('env', '=', env)
    .where('kind', '=', 'confidential')
    .orderBy('created_at')
    .executeTakeFirst();
  if (!client) throw conflict('the developer has no machine credential to book with', 'developer_id');
  return { kind: 'client', env, developerId, clientId: client.client_id, scopes: new Set(client.scopes) };
}

/**
 * Runs one fixture (docs/console.md, "Sandbox tools"): books the test patient at the fixture's next
 * free slot as the developer's machine credential (and, for `reschedule-failed`, reschedules it to the
 * slot after), through the normal booking code; the evaluator then settles it as `FIXTURES` says.
 * `outcomes`: the sandbox's forced outcomes (src/domain/sandbox/booking-outcomes.ts). Throws
 * `refused` outside the sandbox, `not_found` for an unknown fixture or developer, `conflict` when the
 * fixture is not in the developer's directory or has no free slot.
 */
export async function runFixture(
  db: Db,
  env: Env,
  developerId: string,
  name: string,
  deps: { outcomes: BookingOutcomePolicy; now?: Date },
): Promise<{ fixture: FixtureInfo; appointment_id: string; appointment_status: string; start_time: string }> {
  sandboxOnly(env);
  const fixture = FIXTURES.find((f) => f.name === name);
  if (!fixture) throw notFound(`no fixture ${name}; fixtures: ${FIXTURES.map((f) => f.name).join(', ')}`, 'name');
  await assertDeveloper(db, env, developerId);
  const principal = await machinePrincipal(db, env, developerId);
  const now = deps.now ?? new Date();
  const visitReasonId = 'pc_sandbox_visit';
  // The fixtures are in New York (src/domain/directory/sandbox-fixtures.ts); look a month ahead.
  const clock = new LocalClock();
  const from = clock.today('America/New_York', now);
  const slots = (await computeAvailability(db, { env, providerLocationIds: [fixture.provider_location_id], visitReasonId, patientType: 'new', now, from, to: clock.addDays(from, FIXTURE_SEARCH_DAYS), stopAfter: 2, clock }))
    .get(fixture.provider_location_id)?.slots ?? [];
  if (slots.length < 2) throw conflict(`the fixture ${name} has no free time in the next ${FIXTURE_SEARCH_DAYS} days`, 'name');
  const booked = await createAppointment(
    db,
    principal,
    {
      appointment_type: 'providers',
      data: { start_time: slots[0]!.startTime, visit_reason_id: visitReasonId, provider_location_id: fixture.provider_location_id, patient: TEST_PATIENT, patient_type: 'new' },
    },
    { now, outcomes: deps.outcomes },
  );
  const row = fixture.name === 'reschedule-failed'
    ? await rescheduleAppointment(db, principal, { appointment_id: booked.id, start_time: slots[1]!.startTime }, { now, outcomes: deps.outcomes })
    : booked;
  return { fixture, appointment_id: row.id, appointment_status: row.appointment_status, start_time: slots[fixture.name === 'reschedule-failed' ? 1 : 0]!.startTime };
}
