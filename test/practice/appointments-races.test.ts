/**
 * Races between a practice's move and the booking developer's (docs/decisions/0014-practice-workspace.md,
 * "One set of rules"): many rounds of staff cancel against /v1 cancel (exactly one wins, the other a
 * 409 naming the status) and against /v1 reschedule (either the cancel comes first and the reschedule
 * is a 409 naming `cancelled`, or both apply in order); never a 500, never half-written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorTransition } from '../../src/domain/appointments/operator-transition.js';
import { DomainError } from '../../src/domain/errors.js';
import { staffCancel } from '../../src/domain/practices/appointments/actions.js';
import { PL } from '../appointments/fixtures.js';
import { engineName } from '../helpers/db.js';
import { bearer, bookAt, nyDate, practiceEnv, slots, staffOf, type PracticeEnv } from './appointment-fixtures.js';

const ROUNDS = 10;

describe(`practice moves racing the developer's (${engineName})`, () => {
  let e: PracticeEnv;
  const staff = staffOf('pt_t');
  beforeAll(async () => {
    e = await practiceEnv();
  });
  afterAll(async () => e?.close());

  const staffCancelled = (id: string) =>
    staffCancel(e.t.db, staff, id, { cancellation_reason_type: 'provider_not_available' }).then(
      () => ({ status: 200, message: '' }),
      (err: unknown) => {
        if (err instanceof DomainError && err.kind === 'conflict') return { status: 409, message: err.message };
        throw err;
      },
    );
  const v1 = async (url: string, payload: Record<string, unknown>) => {
    const res = await e.t.app.inject({ method: 'POST', url, headers: bearer(e.token), payload });
    return { status: res.statusCode, message: res.statusCode === 200 ? '' : (res.json() as { errors: { message: string }[] }).errors[0]!.message };
  };
  const state = async (id: string) => {
    const a = await e.t.db.selectFrom('appointments').select(['appointment_status', 'pending_start_time']).where('id', '=', id).executeTakeFirstOrThrow();
    const holds = await e.t.db.selectFrom('appointment_holds').select('kind').where('appointment_id', '=', id).execute();
    const events = await e.t.db.selectFrom('outbox_events').select(['update_type']).where('appointment_id', '=', id).execute();
    return { ...a, holds: holds.length, events: events.length };
  };

  it(`staff cancel against /v1 cancel, ${ROUNDS} rounds: exactly one wins`, async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const b = await bookAt(e, PL.ny, 20 + (i % 5), 2 + Math.floor(i / 5) * 3);
      await operatorTransition(e.t.db, 'sandbox', b.id, { to: 'confirmed' });
      const [s, d] = await Promise.all([staffCancelled(b.id), v1('/v1/appointments/cancel', { appointment_id: b.id, cancellation_reason_type: 'patient_no_longer_available' })]);
      expect([s.status, d.status].sort()).toEqual([200, 409]);
      expect([s, d].find((r) => r.status === 409)!.message).toMatch(/current status is cancelled/);
      // created, confirmed, cancelled: one event each, no holds.
      expect(await state(b.id)).toMatchObject({ appointment_status: 'cancelled', holds: 0, events: 3 });
    }
  });

  it(`staff cancel against /v1 reschedule, ${ROUNDS} rounds: one order or the other, never half-written`, async () => {
    const orders = { cancelFirst: 0, rescheduleFirst: 0 };
    for (let i = 0; i < ROUNDS; i++) {
      const days = 30 + (i % 5);
      const b = await bookAt(e, PL.ny2, days, 2 + Math.floor(i / 5) * 3);
      await operatorTransition(e.t.db, 'sandbox', b.id, { to: 'confirmed' });
      const free = (await slots(e, PL.ny2, { start: nyDate(days), end: nyDate(days) })).at(-1 - Math.floor(i / 5))!.start_time;
      const [s, d] = await Promise.all([staffCancelled(b.id), v1('/v1/appointments/reschedule', { appointment_id: b.id, start_time: free })]);
      expect(s.status).toBe(200);
      expect([200, 409]).toContain(d.status);
      const after = await state(b.id);
      expect(after).toMatchObject({ appointment_status: 'cancelled', holds: 0, pending_start_time: null });
      if (d.status === 409) {
        orders.cancelFirst++;
        expect(d.message).toMatch(/current status is cancelled/);
        expect(after.events).toBe(3);
      } else {
        orders.rescheduleFirst++;
        expect(after.events).toBe(4);
      }
    }
    expect(orders.cancelFirst + orders.rescheduleFirst).toBe(ROUNDS);
  });
});
