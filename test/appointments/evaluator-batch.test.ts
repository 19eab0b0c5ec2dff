/**
 * The evaluator moves a whole batch at once (docs/api/appointments.md#moves-the-service-makes,
 * docs/performance.md "The evaluator"): many due bookings and reschedules with every outcome, moved in
 * one pass with a fixed number of statements, each with the row, held time, webhook event and audit
 * row the one-at-a-time moves write, and each decided as `isScheduledStart` (the per-row check the
 * evaluator made before) decides it.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatementMeter } from '../../bench/statement-meter.js';
import { runEvaluatorOnce, type EvaluationOutcome } from '../../src/domain/appointments/evaluator.js';
import { isScheduledStart } from '../../src/domain/availability/scheduled-start.js';
import { SANDBOX_FIXTURES } from '../../src/domain/directory/sandbox-fixtures.js';
import { sandboxBookingOutcomes } from '../../src/domain/sandbox/booking-outcomes.js';
import { loadProviderLocations } from '../../src/domain/scheduling/schedule-data.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { otherHandle } from './evaluator-handles.js';
import { book, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from './fixtures.js';

describe(`evaluator: a batch with every outcome in one pass (${engineName})`, () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv();
  });
  afterAll(async () => e.close());

  const row = (id: string) => e.t.db.selectFrom('appointments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const holds = async (id: string) =>
    (await e.t.db.selectFrom('appointment_holds').select(['kind', sql<string>`lower(during)`.as('start')]).where('appointment_id', '=', id).orderBy('kind').execute()).map(
      (h) => ({ kind: h.kind, start: new Date(h.start).getTime() }),
    );
  const lastEvent = (id: string) =>
    e.t.db.selectFrom('outbox_events').select(['update_type', 'changed_attributes', 'status']).where('appointment_id', '=', id).orderBy('occurred_at', 'desc').orderBy('status').executeTakeFirst();
  const serviceAudits = (id: string) =>
    e.t.db.selectFrom('audit_log').select(['actor_kind', 'actor_client_id', 'actor_user_id', 'action', 'request_id']).where('appointment_id', '=', id).where('actor_kind', '=', 'service').execute();
  const free = async (pl: string, date: string, visitReasonId = 'pc_t30') => (await slots(e, pl, { start: date, end: date, visitReasonId })).map((s) => s.start_time);
  const booked = async (pl: string, start: string, visitReasonId = 'pc_t30') => {
    const res = await book(e, pl, start, { visit_reason_id: visitReasonId });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.appointment_id as string;
  };
  const reschedule = async (id: string, start: string) => {
    const res = await e.t.app.inject({ method: 'POST', url: '/v1/appointments/reschedule', headers: bearer(e.token), payload: { appointment_id: id, start_time: start } });
    expect(res.statusCode, res.body).toBe(200);
  };
  const timeOff = (providerId: string, date: string) =>
    sql`INSERT INTO time_off (id, env, practice_id, provider_id, start_date, end_date) VALUES (${`to_${randomUUID()}`}, 'sandbox', 'pt_t', ${providerId}, ${date}, ${date})`.execute(e.t.db);
  const pushSlots = async (provider: string, location: string, zone: string, date: string, times: string[]) => {
    const res = await e.t.app.inject({
      method: 'PUT', url: `/v1/providers/${provider}/calendar/timeslots?date=${date}`, headers: bearer(e.token),
      payload: { timeslots: times.map((t) => ({ provider_id: provider, location_id: location, start_time: `${date}T${t}`, time_zone: zone })) },
    });
    expect(res.statusCode, res.body).toBe(200);
  };

  it('moves every due row with its outcome, held time, event and audit row, in one pass of nine statements at most', async () => {
    const [dayA, dayB, dayC] = [nyDate(20), nyDate(21), nyDate(22)];
    const expected = new Map<string, EvaluationOutcome>();
    const targets = new Map<string, string>();

    // Confirmed first, then rescheduled: to a free time (rescheduled), to a time then closed by time off, at the fixture that fails every reschedule.
    const phxA = await free(PL.phx, dayA);
    const toMove = [await booked(PL.phx, phxA[0]!), await booked(PL.phx, phxA[2]!), await booked(PL.phx, phxA[4]!)];
    const toFail = [await booked(PL.phx, phxA[6]!), await booked(PL.phx, phxA[8]!)];
    const fixtureStart = (await slots(e, SANDBOX_FIXTURES.rescheduleFailed, { start: dayA, end: dayA, visitReasonId: 'pc_sandbox_visit' }))[0]!.start_time;
    const forcedReschedule = await booked(SANDBOX_FIXTURES.rescheduleFailed, fixtureStart, 'pc_sandbox_visit');
    const alreadyConfirmed = await booked(PL.ny, (await free(PL.ny, dayC))[0]!);
    await runEvaluatorOnce(e.t.db, { outcomes: sandboxBookingOutcomes });
    const phxB = await free(PL.phx, dayB);
    const phxC = await free(PL.phx, dayC);
    const moveTo = async (id: string, target: string, outcome: EvaluationOutcome) => {
      await reschedule(id, target);
      targets.set(id, target);
      expected.set(id, outcome);
    };
    for (const [i, id] of toMove.entries()) await moveTo(id, phxB[2 * i]!, 'rescheduled');
    for (const [i, id] of toFail.entries()) await moveTo(id, phxC[2 * i]!, 'reschedule_failed');
    const fixtureTarget = (await slots(e, SANDBOX_FIXTURES.rescheduleFailed, { start: dayB, end: dayB, visitReasonId: 'pc_sandbox_visit' }))[0]!.start_time;
    await reschedule(forcedReschedule, fixtureTarget);
    expected.set(forcedReschedule, 'reschedule_failed');

    // New bookings: offered (confirmed), closed by time off afterwards, at a pushed calendar slot (kept or erased),
    // at a provider-location deactivated afterwards, at the fixture that fails every booking.
    const nyA = await free(PL.ny, dayA);
    for (let i = 0; i < 8; i++) expected.set(await booked(PL.ny, nyA[2 * i]!), 'confirmed');
    const ny2A = await free(PL.ny2, dayA);
    for (let i = 0; i < 4; i++) expected.set(await booked(PL.ny2, ny2A[2 * i]!), 'booking_failed');
    await pushSlots('pr_hnl', 'lo_hnl', 'Pacific/Honolulu', dayB, ['07:00']);
    expected.set(await booked(PL.hnl, `${dayB}T07:00:00-10:00`), 'confirmed');
    await pushSlots('pr_hnl', 'lo_hnl', 'Pacific/Honolulu', dayC, ['07:00']);
    expected.set(await booked(PL.hnl, `${dayC}T07:00:00-10:00`), 'booking_failed');
    const elsewhere = await booked(PL.nyElsewhere, (await free(PL.nyElsewhere, dayB))[0]!);
    expected.set(elsewhere, 'booking_failed');
    const fixtureBooking = await booked(SANDBOX_FIXTURES.failed, (await slots(e, SANDBOX_FIXTURES.failed, { start: dayA, end: dayA, visitReasonId: 'pc_sandbox_visit' }))[0]!.start_time, 'pc_sandbox_visit');
    expected.set(fixtureBooking, 'booking_failed');
    // Due although no longer pending: only its evaluate_after is cleared.
    await e.t.db.updateTable('appointments').set({ evaluate_after: new Date(Date.now() - 1000) }).where('id', '=', alreadyConfirmed).execute();
    expected.set(alreadyConfirmed, 'skipped');

    // The schedule changes after booking.
    await timeOff('pr_ny2', dayA);
    await timeOff('pr_phx', dayC);
    await pushSlots('pr_hnl', 'lo_hnl', 'Pacific/Honolulu', dayC, []);
    await e.t.db.updateTable('provider_locations').set({ active: false }).where('id', '=', PL.nyElsewhere).execute();

    try {
      const before = new Map(await Promise.all([...expected.keys()].map(async (id) => [id, await row(id)] as const)));
      // The answer of the per-row check, for every move the schedule decides (not the fixtures' forced ones).
      const now = new Date();
      const pls = await loadProviderLocations(e.t.db, 'sandbox', [PL.ny, PL.ny2, PL.phx, PL.hnl, PL.nyElsewhere]);
      for (const [id, r] of before) {
        const pl = pls.get(r.provider_location_id);
        if (!pl) continue;
        const start = r.appointment_status === 'pending_reschedule' ? r.pending_start_time! : r.start_time;
        const offered = pl.active && (await isScheduledStart(e.t.db, { env: 'sandbox', pl, visitReasonId: r.visit_reason_id, patientType: r.patient_type, startMs: start.getTime(), now }));
        if (r.appointment_status === 'pending_booking') expect([id, offered ? 'confirmed' : 'booking_failed']).toEqual([id, expected.get(id)]);
        if (r.appointment_status === 'pending_reschedule') expect([id, offered ? 'rescheduled' : 'reschedule_failed']).toEqual([id, expected.get(id)]);
      }

      const meter = new StatementMeter();
      const metered = await otherHandle(e.t, { wrapDialect: meter.wrap });
      let pass;
      try {
        pass = await runEvaluatorOnce(metered.db, { now, limit: 200, outcomes: sandboxBookingOutcomes });
      } finally {
        await metered.close();
      }
      expect(new Map(pass.evaluated.map((x) => [x.appointmentId, x.outcome]))).toEqual(expected);
      expect(pass.evaluated).toHaveLength(expected.size);
      // BEGIN, claim, schedule read, SAVEPOINT, the move, the reschedules' new time made current, RELEASE, COMMIT,
      // expired Idempotency-Keys: the same for 25 rows as for 1 (one at a time it was about nine per row).
      expect(meter.snapshot().statements).toBeLessThanOrEqual(9);

      for (const [id, outcome] of expected) {
        const b = before.get(id)!;
        const a = await row(id);
        const h = await holds(id);
        expect(a.evaluate_after, id).toBeNull();
        if (outcome === 'skipped') {
          expect(a).toEqual({ ...b, evaluate_after: null });
          expect(await serviceAudits(id)).toHaveLength(1); // its own evaluation, earlier
          continue;
        }
        expect(a.appointment_status, id).toBe(outcome);
        expect(a.updated_at.getTime()).toBeGreaterThan(b.updated_at.getTime());
        const changed = { confirmed: ['appointment.status', 'appointment.confirmation_type'], booking_failed: ['appointment.status'], rescheduled: ['appointment.status', 'appointment.start_time'], reschedule_failed: ['appointment.status'] }[outcome as 'confirmed'];
        expect(await lastEvent(id), id).toEqual({ update_type: 'updated', changed_attributes: changed.map((p) => ({ attribute_path: p })), status: 'pending' });
        expect((await serviceAudits(id)).at(-1)).toEqual({ actor_kind: 'service', actor_client_id: null, actor_user_id: null, action: `evaluate:${outcome}`, request_id: null });
        if (outcome === 'confirmed' || outcome === 'booking_failed') {
          expect(a.confirmation_type).toBe('auto');
          expect([a.start_time, a.end_time]).toEqual([b.start_time, b.end_time]);
          expect(h).toEqual(outcome === 'confirmed' ? [{ kind: 'current', start: b.start_time.getTime() }] : []);
        } else {
          expect([a.pending_start_time, a.pending_end_time]).toEqual([null, null]);
          expect(a.confirmation_type).toBe(b.confirmation_type);
          const kept = outcome === 'rescheduled' ? b.pending_start_time! : b.start_time;
          expect(a.start_time.getTime(), id).toBe(kept.getTime());
          expect(a.end_time.getTime()).toBe((outcome === 'rescheduled' ? b.pending_end_time! : b.end_time).getTime());
          expect(h).toEqual([{ kind: 'current', start: kept.getTime() }]);
          if (targets.has(id)) expect(b.pending_start_time!.getTime()).toBe(new Date(targets.get(id)!).getTime());
        }
      }
      // Nothing is due any more, and a second pass finds nothing.
      expect((await runEvaluatorOnce(e.t.db, { outcomes: sandboxBookingOutcomes })).evaluated.filter((x) => expected.has(x.appointmentId))).toEqual([]);
    } finally {
      await e.t.db.updateTable('provider_locations').set({ active: true }).where('id', '=', PL.nyElsewhere).execute();
    }
  });
});
