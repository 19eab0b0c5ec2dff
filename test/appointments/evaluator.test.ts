/** The service's own moves (docs/api/appointments.md#moves-the-service-makes), sandbox fixtures, and the operator's transition (docs/api/admin.md#appointment-transitions). */
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEvaluatorOnce } from '../../src/domain/appointments/evaluator.js';
import { evaluatorJob } from '../../src/jobs/evaluator.js';
import { startLoop } from '../../src/jobs/loop.js';
import { SANDBOX_FIXTURES } from '../../src/domain/directory/sandbox-fixtures.js';
import { sandboxBookingOutcomes } from '../../src/domain/sandbox/booking-outcomes.js';
import { buildCli } from '../../src/cli/main.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { book, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from './fixtures.js';

describe(`evaluator, sandbox fixtures and operator moves (${engineName})`, () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv();
  });
  afterAll(async () => e.close());

  const fresh = async (pl: string, visitReasonId = 'pc_t30') => {
    const s = (await slots(e, pl, { start: nyDate(6), end: nyDate(7), visitReasonId }))[0]!.start_time;
    const res = await book(e, pl, s, { visit_reason_id: visitReasonId });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.appointment_id as string;
  };
  const row = (id: string) => e.t.db.selectFrom('appointments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const holds = async (id: string) => (await e.t.db.selectFrom('appointment_holds').select('kind').where('appointment_id', '=', id).orderBy('kind').execute()).map((h) => h.kind);
  const events = (id: string) => e.t.db.selectFrom('outbox_events').select(['update_type', 'changed_attributes', 'status']).where('appointment_id', '=', id).orderBy('occurred_at').execute();
  const reschedule = async (id: string, pl: string) => {
    const target = (await slots(e, pl, { start: nyDate(6), end: nyDate(7), visitReasonId: 'pc_sandbox_visit' }))[0]!.start_time;
    return e.t.app.inject({ method: 'POST', url: '/v1/appointments/reschedule', headers: bearer(e.token), payload: { appointment_id: id, start_time: target } });
  };

  it('a row whose evaluation fails is rolled back alone and set aside; the rows behind it are evaluated; other environments are left alone', async () => {
    const bad = await fresh(PL.ny);
    const good = await fresh(PL.ny);
    // Only the evaluation of this process's environment touches them.
    expect((await runEvaluatorOnce(e.t.db, { env: 'production' })).evaluated.map((x) => x.appointmentId)).not.toContain(good);
    // The bad row comes first and its status change fails (as a broken row would).
    await e.t.db.updateTable('appointments').set({ evaluate_after: new Date(Date.now() - 60_000) }).where('id', '=', bad).execute();
    await sql`CREATE FUNCTION refuse_status_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'simulated failure'; END $$`.execute(e.t.db);
    await sql.raw(`CREATE TRIGGER refuse_bad BEFORE UPDATE OF appointment_status ON appointments FOR EACH ROW
      WHEN (OLD.id = '${bad}') EXECUTE FUNCTION refuse_status_change()`).execute(e.t.db);
    try {
      const failures: string[] = [];
      const pass = await runEvaluatorOnce(e.t.db, { env: 'sandbox', onRowError: (_err, id) => failures.push(id) });
      expect(pass.evaluated).toContainEqual({ appointmentId: bad, outcome: 'error' });
      expect(pass.evaluated).toContainEqual({ appointmentId: good, outcome: 'confirmed' });
      expect(failures).toEqual([bad]);
      const b = await row(bad);
      expect(b.appointment_status).toBe('pending_booking');
      expect(b.evaluate_after!.getTime()).toBeGreaterThan(Date.now() + 30_000);
      expect((await row(good)).appointment_status).toBe('confirmed');
    } finally {
      await sql`DROP TRIGGER refuse_bad ON appointments`.execute(e.t.db);
      await sql`DROP FUNCTION refuse_status_change()`.execute(e.t.db);
    }
  });

  it('auto: confirmed by the evaluator, confirmation_type auto, a delivered (pending) event', async () => {
    const id = await fresh(PL.ny);
    const pass = await runEvaluatorOnce(e.t.db);
    expect(pass.evaluated).toContainEqual({ appointmentId: id, outcome: 'confirmed' });
    expect(await row(id)).toMatchObject({ appointment_status: 'confirmed', confirmation_type: 'auto', evaluate_after: null });
    expect((await events(id)).at(-1)).toEqual({ update_type: 'updated', changed_attributes: [{ attribute_path: 'appointment.status' }, { attribute_path: 'appointment.confirmation_type' }], status: 'pending' });
    // Evaluated once only.
    expect((await runEvaluatorOnce(e.t.db)).evaluated.map((x) => x.appointmentId)).not.toContain(id);
  });

  it('auto: booking_failed when the schedule no longer offers the time; the time is released', async () => {
    const id = await fresh(PL.ny2);
    await e.t.db.deleteFrom('weekly_schedules').where('provider_location_id', '=', PL.ny2).execute();
    await runEvaluatorOnce(e.t.db);
    expect((await row(id)).appointment_status).toBe('booking_failed');
    expect(await holds(id)).toEqual([]);
  });

  it('manual: never evaluated, waits for confirm', async () => {
    const id = await fresh(PL.manual);
    await runEvaluatorOnce(e.t.db);
    expect((await row(id)).appointment_status).toBe('pending_booking');
  });

  describe('sandbox fixtures force their outcome', () => {
    // The policy the composition root installs (buildApp, startBackgroundWorkers).
    const evaluateWithFixtures = () => runEvaluatorOnce(e.t.db, { outcomes: sandboxBookingOutcomes });

    it('the evaluator knows no fixture: without the sandbox policy, a booking at a fixture is evaluated like any other', async () => {
      const id = await fresh(SANDBOX_FIXTURES.failed, 'pc_sandbox_visit');
      await runEvaluatorOnce(e.t.db);
      expect((await row(id)).appointment_status).toBe('confirmed');
    });

    it(`${SANDBOX_FIXTURES.failed}: booking_failed`, async () => {
      const id = await fresh(SANDBOX_FIXTURES.failed, 'pc_sandbox_visit');
      await evaluateWithFixtures();
      expect((await row(id)).appointment_status).toBe('booking_failed');
      expect(await holds(id)).toEqual([]);
      const read = await e.t.app.inject({ url: `/v1/appointments/${id}`, headers: bearer(e.token) });
      expect(read.json().data.appointment_status).toBe('booking_failed');
    });

    it(`${SANDBOX_FIXTURES.pending}: stays pending_booking, and a reschedule stays pending_reschedule`, async () => {
      const id = await fresh(SANDBOX_FIXTURES.pending, 'pc_sandbox_visit');
      await evaluateWithFixtures();
      expect((await row(id)).appointment_status).toBe('pending_booking');
      expect((await reschedule(id, SANDBOX_FIXTURES.pending)).statusCode).toBe(200);
      await evaluateWithFixtures();
      expect((await row(id)).appointment_status).toBe('pending_reschedule');
    });

    it(`${SANDBOX_FIXTURES.manual}: manual, confirmed by the client`, async () => {
      const id = await fresh(SANDBOX_FIXTURES.manual, 'pc_sandbox_visit');
      await evaluateWithFixtures();
      expect(await row(id)).toMatchObject({ appointment_status: 'pending_booking', confirmation_type: 'manual' });
      const res = await e.t.app.inject({ method: 'POST', url: '/v1/appointments/confirm', headers: bearer(e.token), payload: { appointment_id: id } });
      expect(res.json().data.appointment_status).toBe('confirmed');
    });

    it(`${SANDBOX_FIXTURES.rescheduleFailed}: booking confirmed, reschedule fails and keeps the old time`, async () => {
      const id = await fresh(SANDBOX_FIXTURES.rescheduleFailed, 'pc_sandbox_visit');
      await evaluateWithFixtures();
      const before = await row(id);
      expect(before.appointment_status).toBe('confirmed');
      expect((await reschedule(id, SANDBOX_FIXTURES.rescheduleFailed)).statusCode).toBe(200);
      expect(await holds(id)).toEqual(['current', 'pending']);
      await evaluateWithFixtures();
      const after = await row(id);
      expect(after.appointment_status).toBe('reschedule_failed');
      expect(after.start_time.getTime()).toBe(before.start_time.getTime());
      expect(await holds(id)).toEqual(['current']);
    });
  });

  it('parallel passes (several processes) evaluate each appointment exactly once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await fresh(PL.hnl));
    const passes = await Promise.all([1, 2, 3].map(() => runEvaluatorOnce(e.t.db, { limit: 4 })));
    const again = await runEvaluatorOnce(e.t.db);
    const evaluated = [...passes, again].flatMap((p) => p.evaluated.map((x) => x.appointmentId)).filter((id) => ids.includes(id));
    expect([...evaluated].sort()).toEqual([...ids].sort());
    for (const id of ids) {
      const serviceEvents = (await events(id)).filter((ev) => ev.status === 'pending');
      expect(serviceEvents).toHaveLength(1);
    }
  });

  it('the evaluator job runs passes in the background until stopped', async () => {
    const id = await fresh(PL.phx);
    const job = evaluatorJob({ db: e.t.db, config: e.t.config, engine: e.t.handle.engine });
    const loop = startLoop({ ...job, intervalMs: 20 }, pino({ level: 'silent' }));
    for (let i = 0; i < 100 && (await row(id)).appointment_status === 'pending_booking'; i++) await new Promise((r) => setTimeout(r, 20));
    await loop.stop();
    expect((await row(id)).appointment_status).toBe('confirmed');
    expect(loop.stats()).toMatchObject({ job: 'evaluator', failures: 0 });
    expect(loop.stats().items).toBeGreaterThanOrEqual(1);
  });

  describe('operator transition', () => {
    const admin = (id: string, body: object) =>
      e.t.app.inject({ method: 'POST', url: `/admin/v1/appointments/${id}/transition`, headers: { authorization: 'Bearer test-admin-token-0123456789abcdefgh' }, payload: body });

    it('confirms a manual booking and fires a delivered event', async () => {
      const id = await fresh(PL.manual);
      const res = await admin(id, { to: 'confirmed' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ appointment_id: id, appointment_status: 'confirmed' });
      expect((await events(id)).at(-1)).toMatchObject({ update_type: 'updated', status: 'pending' });
    });

    it('cancels with a reason type (cancelled event), refuses moves the table does not allow with 409', async () => {
      const id = await fresh(PL.manual);
      const res = await admin(id, { to: 'cancelled', cancellation_reason_type: 'provider_not_available' });
      expect(res.statusCode, res.body).toBe(200);
      expect(await row(id)).toMatchObject({ appointment_status: 'cancelled', cancellation_reason_type: 'provider_not_available' });
      expect((await events(id)).at(-1)).toMatchObject({ update_type: 'cancelled', status: 'pending' });
      const again = await admin(id, { to: 'confirmed' });
      expect(again.statusCode).toBe(409);
      expect(again.json().errors[0].message).toContain('cancelled');
      expect((await admin(id, { to: 'flying' })).statusCode).toBe(400);
      expect((await admin('nope', { to: 'confirmed' })).statusCode).toBe(404);
      const unauth = await e.t.app.inject({ method: 'POST', url: `/admin/v1/appointments/${id}/transition`, payload: { to: 'cancelled' } });
      expect(unauth.statusCode).toBe(401);
    });

    it('resolves a pending reschedule to rescheduled', async () => {
      const id = await fresh(SANDBOX_FIXTURES.pending, 'pc_sandbox_visit');
      await reschedule(id, SANDBOX_FIXTURES.pending);
      const res = await admin(id, { to: 'rescheduled' });
      expect(res.statusCode, res.body).toBe(200);
      expect((await row(id)).appointment_status).toBe('rescheduled');
      expect(await holds(id)).toEqual(['current']);
    });

    it('the CLI makes the same move through the admin API', async () => {
      const id = await fresh(PL.manual);
      const base = await e.t.listen();
      const out: string[] = [];
      const write = process.stdout.write.bind(process.stdout);
      process.stdout.write = ((s: string) => (out.push(String(s)), true)) as typeof process.stdout.write;
      try {
        await buildCli({ LOG_LEVEL: 'silent' }).parseAsync(
          ['--url', base, '--admin-token', 'test-admin-token-0123456789abcdefgh', 'appointment', 'transition', id, '--to', 'booking_failed', '--json'],
          { from: 'user' },
        );
      } finally {
        process.stdout.write = write;
      }
      expect(JSON.parse(out.join(''))).toMatchObject({ appointment_id: id, appointment_status: 'booking_failed' });
      expect(await holds(id)).toEqual([]);
    });
  });
});
