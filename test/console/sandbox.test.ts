/**
 * The console's sandbox tools (docs/console.md, "Sandbox tools") on a real database: each fixture run
 * books through the booking code and ends as documented, with the webhook a real receiver verifies
 * where one is documented; a reset deletes only the developer's own rows and production refuses both.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, listFixtures, resetSandbox, runFixture } from '../../src/domain/console/sandbox.js';
import { setReceiver } from '../../src/domain/console/webhooks.js';
import { runEvaluatorOnce } from '../../src/domain/appointments/evaluator.js';
import { DomainError } from '../../src/domain/errors.js';
import { sandboxBookingOutcomes } from '../../src/domain/sandbox/booking-outcomes.js';
import { createWebhookWorker } from '../../src/webhooks/worker.js';
import { engineName } from '../helpers/db.js';
import { bearer } from '../helpers/auth.js';
import { patient, PL, schedulingEnv, slots, type SchedulingEnv } from '../appointments/fixtures.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

async function domainError(fn: () => Promise<unknown>): Promise<DomainError> {
  const e = await fn().then(() => undefined, (x: unknown) => x);
  if (e instanceof DomainError) return e;
  throw new Error(`expected a DomainError, got ${String(e)}`);
}

describe(`console sandbox tools (${engineName})`, () => {
  let e: SchedulingEnv;
  let rx: Receiver;
  const key = randomBytes(32).toString('base64');
  const deps = { outcomes: sandboxBookingOutcomes };

  beforeAll(async () => {
    e = await schedulingEnv();
    rx = await startReceiver([key]);
    await setReceiver(e.t.db, 'sandbox', e.dev.developer_id, { url: rx.url, key }, { allowPrivateTargets: true });
  });
  afterAll(async () => {
    await rx.close();
    await e.close();
  });

  const status = async (id: string) => (await e.t.db.selectFrom('appointments').select('appointment_status').where('id', '=', id).executeTakeFirstOrThrow()).appointment_status;
  /** The evaluator and the delivery worker, once each, as the background jobs would run them. */
  async function settleAndDeliver(): Promise<void> {
    await runEvaluatorOnce(e.t.db, { env: 'sandbox', outcomes: sandboxBookingOutcomes });
    await createWebhookWorker(e.t.db, { env: 'sandbox', allowPrivateTargets: true }).runOnce();
  }
  const hooksFor = (appointmentId: string) =>
    rx.received.filter((r) => (r.body as { data?: { appointment_data?: { appointment_id?: string } } }).data?.appointment_data?.appointment_id === appointmentId);

  it('lists the four fixtures with what each does, in the sandbox only', async () => {
    expect(listFixtures('sandbox')).toEqual(FIXTURES);
    expect((await domainError(async () => listFixtures('production'))).kind).toBe('refused');
    expect(FIXTURES.map((f) => f.name).sort()).toEqual(['failed', 'manual', 'pending', 'reschedule-failed']);
    expect(FIXTURES.map((f) => f.provider_location_id).sort()).toEqual(['pr_failed|lo_failed', 'pr_manual|lo_manual', 'pr_pending|lo_pending', 'pr_reschedulefailed|lo_reschedulefailed']);
  });

  it('failed: the booking fails and a signed `updated` webhook with appointment.status reaches the receiver', async () => {
    const run = await runFixture(e.t.db, 'sandbox', e.dev.developer_id, 'failed', deps);
    expect(run).toMatchObject({ appointment_status: 'pending_booking', fixture: { name: 'failed', webhook: true } });
    await settleAndDeliver();
    expect(await status(run.appointment_id)).toBe('booking_failed');
    const [hook, ...more] = hooksFor(run.appointment_id);
    expect(more).toEqual([]);
    expect(hook!.verifiedWith).toEqual([key]);
    expect(hook!.body).toMatchObject({ data: { appointment_data: { appointment_update_type: 'updated', changed_attributes: expect.arrayContaining([{ attribute_path: 'appointment.status' }]) } } });
    // The booking itself was the developer's own call: recorded, not sent.
    const events = await e.t.db.selectFrom('outbox_events').select(['status']).where('appointment_id', '=', run.appointment_id).orderBy('occurred_at').execute();
    expect(events.map((x) => x.status)).toEqual(['skipped', 'delivered']);
  });

  it('reschedule-failed: booked, rescheduled, the reschedule fails keeping the first time, and the webhook follows', async () => {
    const run = await runFixture(e.t.db, 'sandbox', e.dev.developer_id, 'reschedule-failed', deps);
    expect(run.appointment_status).toBe('pending_reschedule');
    const first = await e.t.db.selectFrom('appointments').select('start_time').where('id', '=', run.appointment_id).executeTakeFirstOrThrow();
    await settleAndDeliver();
    expect(await status(run.appointment_id)).toBe('reschedule_failed');
    const after = await e.t.db.selectFrom('appointments').select('start_time').where('id', '=', run.appointment_id).executeTakeFirstOrThrow();
    expect(after.start_time.getTime()).toBe(first.start_time.getTime());
    expect(new Date(run.start_time).getTime()).not.toBe(first.start_time.getTime());
    const hooks = hooksFor(run.appointment_id);
    expect(hooks).toHaveLength(1);
    expect(hooks[0]!.verifiedWith).toEqual([key]);
  });

  it('pending and manual: the booking stays pending_booking and no webhook is sent', async () => {
    for (const name of ['pending', 'manual']) {
      const run = await runFixture(e.t.db, 'sandbox', e.dev.developer_id, name, deps);
      await settleAndDeliver();
      expect(await status(run.appointment_id)).toBe('pending_booking');
      expect(hooksFor(run.appointment_id)).toEqual([]);
    }
  });

  it('names an unknown fixture, refuses production, and refuses a developer without the fixtures', async () => {
    const unknown = await domainError(() => runFixture(e.t.db, 'sandbox', e.dev.developer_id, 'explode', deps));
    expect(unknown.kind).toBe('not_found');
    expect(unknown.errors[0]).toMatchObject({ field: 'name' });
    expect((await domainError(() => runFixture(e.t.db, 'production', e.dev.developer_id, 'failed', deps))).kind).toBe('refused');
    expect((await domainError(() => runFixture(e.t.db, 'sandbox', 'dv_nobody', 'failed', deps))).kind).toBe('not_found');
  });

  it("resets only the developer's own rows, in every table it names, and answers the counts", async () => {
    // The other developer books through the API at a provider-location both share.
    const [slot] = await slots({ t: e.t, token: e.otherToken }, PL.ny);
    const theirs = await e.t.app.inject({
      method: 'POST', url: '/v1/appointments', headers: bearer(e.otherToken),
      payload: { appointment_type: 'providers', data: { start_time: slot!.start_time, visit_reason_id: slot!.visit_reason_id, provider_location_id: PL.ny, patient: patient(), patient_type: 'new' } },
    });
    expect(theirs.statusCode, theirs.body).toBe(200);
    const theirId = (theirs.json() as { data: { appointment_id?: string; id?: string } }).data;
    const mine = await e.t.app.inject({ url: '/v1/appointments', headers: bearer(e.token) });
    expect(mine.statusCode).toBe(200);
    const countOf = async (table: 'appointments' | 'patients' | 'outbox_events' | 'webhook_deliveries' | 'request_log', developerId: string) =>
      Number((await e.t.db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).where('developer_id', '=', developerId).executeTakeFirstOrThrow()).n);
    // Wait until both calls are in the request log.
    for (let i = 0; i < 100 && ((await countOf('request_log', e.dev.developer_id)) === 0 || (await countOf('request_log', e.other.developer_id)) === 0); i++) await new Promise((r) => setTimeout(r, 50));
    const before = {
      appointments: await countOf('appointments', e.dev.developer_id),
      deliveries: await countOf('webhook_deliveries', e.dev.developer_id),
      theirAppointments: await countOf('appointments', e.other.developer_id),
      theirPatients: await countOf('patients', e.other.developer_id),
      theirEvents: await countOf('outbox_events', e.other.developer_id),
      theirLog: await countOf('request_log', e.other.developer_id),
    };
    expect(before.appointments).toBeGreaterThanOrEqual(4);
    expect(before.theirAppointments).toBe(1);

    const counts = await resetSandbox(e.t.db, 'sandbox', e.dev.developer_id, e.t.attachments);
    expect(counts.appointments).toBe(before.appointments);
    expect(counts.webhook_deliveries).toBe(before.deliveries);
    expect(counts.patients).toBeGreaterThanOrEqual(1);
    expect(counts.holds).toBeGreaterThanOrEqual(1);
    expect(counts.outbox_events).toBeGreaterThanOrEqual(before.appointments);
    expect(counts.request_log).toBeGreaterThanOrEqual(1);
    for (const table of ['appointments', 'patients', 'outbox_events', 'webhook_deliveries', 'request_log'] as const) expect(await countOf(table, e.dev.developer_id)).toBe(0);
    expect(await countOf('appointments', e.other.developer_id)).toBe(before.theirAppointments);
    expect(await countOf('patients', e.other.developer_id)).toBe(before.theirPatients);
    expect(await countOf('outbox_events', e.other.developer_id)).toBe(before.theirEvents);
    expect(await countOf('request_log', e.other.developer_id)).toBeGreaterThanOrEqual(before.theirLog);
    const id = theirId.appointment_id ?? theirId.id;
    expect((await e.t.app.inject({ url: `/v1/appointments/${id}`, headers: bearer(e.otherToken) })).statusCode).toBe(200);
    // The developer's sandbox works again at once: the freed fixture time can be booked.
    expect((await runFixture(e.t.db, 'sandbox', e.dev.developer_id, 'failed', deps)).appointment_status).toBe('pending_booking');
    expect((await resetSandbox(e.t.db, 'sandbox', e.dev.developer_id, e.t.attachments)).appointments).toBe(1);
  });

  it('refuses a reset in production and of an unknown developer', async () => {
    const refused = await domainError(() => resetSandbox(e.t.db, 'production', e.dev.developer_id, e.t.attachments));
    expect(refused.kind).toBe('refused');
    expect((await domainError(() => resetSandbox(e.t.db, 'sandbox', 'dv_nobody', e.t.attachments))).kind).toBe('not_found');
  });
});
