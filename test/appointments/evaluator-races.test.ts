/**
 * The evaluator under concurrency (docs/api/appointments.md#moves-the-service-makes): two evaluators
 * over the same due bookings (on PostgreSQL through two handles with their own connections, as two
 * processes; on PGlite two loops on the one engine) evaluate each booking exactly once and leave none
 * due; bookings cancelled or rescheduled while an evaluator runs are never moved from a status they
 * no longer have. The order of what happened to each appointment is read back from the audit log
 * (every change writes its audit row while it holds the appointment's row lock, so the ids' order is
 * the order of the changes).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { runEvaluatorOnce, type EvaluatorPass } from '../../src/domain/appointments/evaluator.js';
import { bearer } from '../helpers/auth.js';
import { engineName, testDatabaseUrl } from '../helpers/db.js';
import { otherHandle } from './evaluator-handles.js';
import { book, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from './fixtures.js';

describe(`evaluator races (${engineName})`, () => {
  let e: SchedulingEnv;
  let second: Awaited<ReturnType<typeof otherHandle>>;
  beforeAll(async () => {
    e = await schedulingEnv();
    second = await otherHandle(e.t);
  });
  afterAll(async () => {
    await second?.close();
    await e.close();
  });

  /** On PostgreSQL the second evaluator has its own connections; on PGlite both share the one engine. */
  const evaluatorDbs = (): [Db, Db] => [e.t.db, testDatabaseUrl ? second.db : e.t.db];

  const bookAll = async (plan: { pl: string; date: string }[]) => {
    const ids: string[] = [];
    const free = new Map<string, string[]>();
    for (const { pl, date } of plan) {
      const key = `${pl} ${date}`;
      if (!free.has(key)) free.set(key, (await slots(e, pl, { start: date, end: date })).map((s) => s.start_time).filter((_, i) => i % 2 === 0));
      const res = await book(e, pl, free.get(key)!.shift()!);
      expect(res.statusCode, res.body).toBe(200);
      ids.push(res.json().data.appointment_id);
    }
    return ids;
  };
  /** Evaluation passes of `limit` rows until one finds nothing it can claim. */
  const evaluateUntilIdle = async (db: Db, limit: number): Promise<EvaluatorPass['evaluated']> => {
    const seen: EvaluatorPass['evaluated'] = [];
    for (;;) {
      const pass = await runEvaluatorOnce(db, { limit });
      seen.push(...pass.evaluated);
      if (pass.evaluated.length === 0) return seen;
    }
  };
  /** Per appointment, its changes in order (reads left out), e.g. `create evaluate:confirmed cancel`. */
  const histories = async (ids: string[]) => {
    const rows = await e.t.db
      .selectFrom('audit_log')
      .select(['appointment_id', 'action'])
      .where('appointment_id', 'in', ids)
      .where((eb) => eb.or([eb('action', 'in', ['create', 'cancel', 'reschedule']), eb('action', 'like', 'evaluate:%')]))
      .orderBy('id')
      .execute();
    const out = new Map(ids.map((id) => [id, [] as string[]]));
    for (const r of rows) out.get(r.appointment_id)!.push(r.action);
    return new Map([...out].map(([id, actions]) => [id, actions.join(' ')]));
  };
  const deliveredEvents = async (ids: string[]) => {
    const rows = await e.t.db.selectFrom('outbox_events').select(['appointment_id', sql<number>`count(*)::int`.as('n')]).where('appointment_id', 'in', ids).where('status', '=', 'pending').groupBy('appointment_id').execute();
    return new Map(ids.map((id) => [id, rows.find((r) => r.appointment_id === id)?.n ?? 0]));
  };
  const stillDue = async (ids: string[]) =>
    (await e.t.db.selectFrom('appointments').select('id').where('id', 'in', ids).where('evaluate_after', 'is not', null).execute()).length;

  it('two evaluators racing over the same due bookings evaluate each exactly once and lose none', async () => {
    const [dayA, dayB] = [nyDate(30), nyDate(31)];
    const plan = [PL.ny, PL.ny2, PL.phx, PL.hnl].flatMap((pl) => [dayA, dayB].flatMap((date) => Array.from({ length: 8 }, () => ({ pl, date }))));
    const ids = await bookAll(plan);
    // Some fail: time off closes one provider on one day.
    await sql`INSERT INTO time_off (id, env, practice_id, provider_id, start_date, end_date) VALUES (${`to_${randomUUID()}`}, 'sandbox', 'pt_t', 'pr_ny2', ${dayB}, ${dayB})`.execute(e.t.db);
    const [a, b] = evaluatorDbs();
    const [byA, byB] = await Promise.all([evaluateUntilIdle(a, 5), evaluateUntilIdle(b, 3)]);
    const mine = [...byA, ...byB].filter((x) => ids.includes(x.appointmentId));
    expect(mine.map((x) => x.appointmentId).sort()).toEqual([...ids].sort());
    expect(await stillDue(ids)).toBe(0);
    const failed = new Set(ids.filter((_, i) => plan[i]!.pl === PL.ny2 && plan[i]!.date === dayB));
    for (const x of mine) expect([x.appointmentId, x.outcome]).toEqual([x.appointmentId, failed.has(x.appointmentId) ? 'booking_failed' : 'confirmed']);
    for (const [id, h] of await histories(ids)) expect([id, h]).toEqual([id, `create evaluate:${failed.has(id) ? 'booking_failed' : 'confirmed'}`]);
    for (const [id, n] of await deliveredEvents(ids)) expect([id, n]).toEqual([id, 1]);
  });

  it('bookings cancelled or rescheduled while the evaluator runs are never moved from a status they no longer have', async () => {
    const [dayA, dayB] = [nyDate(40), nyDate(41)];
    const plan = [PL.ny, PL.phx, PL.hnl].flatMap((pl) => Array.from({ length: 16 }, () => ({ pl, date: dayA })));
    const ids = await bookAll(plan);
    // Half are cancelled, half rescheduled (to free times a day later, at their own provider-location).
    const targetsByPl = new Map<string, string[]>();
    for (const pl of [PL.ny, PL.phx, PL.hnl]) targetsByPl.set(pl, (await slots(e, pl, { start: dayB, end: dayB })).map((s) => s.start_time).filter((_, i) => i % 2 === 0));
    const ops = ids.map((id, i) => (i % 2 === 0 ? { id, op: 'cancel' as const } : { id, op: 'reschedule' as const, to: targetsByPl.get(plan[i]!.pl)!.shift()! }));

    const [a, b] = evaluatorDbs();
    let running = true;
    const evaluator = async (db: Db) => {
      while (running) {
        await runEvaluatorOnce(db, { limit: 2 });
        await new Promise((r) => setTimeout(r, 1));
      }
    };
    const evaluators = [evaluator(a), evaluator(b)];
    const answers = await Promise.all(
      ops.map(async (o, i) => {
        // Spread over the evaluators' run: some before a booking's evaluation, some during, some after.
        await new Promise((r) => setTimeout(r, (i * 7) % 60));
        const res = await e.t.app.inject({
          method: 'POST', url: `/v1/appointments/${o.op}`, headers: bearer(e.token),
          payload: o.op === 'cancel' ? { appointment_id: o.id } : { appointment_id: o.id, start_time: o.to },
        });
        return res.statusCode;
      }),
    );
    running = false;
    await Promise.all(evaluators);
    await evaluateUntilIdle(e.t.db, 50);

    expect(answers.every((s) => s === 200), JSON.stringify(answers)).toBe(true);
    expect(await stillDue(ids)).toBe(0);
    const history = await histories(ids);
    const events = await deliveredEvents(ids);
    for (const o of ops) {
      const h = history.get(o.id)!;
      const r = await e.t.db.selectFrom('appointments').selectAll().where('id', '=', o.id).executeTakeFirstOrThrow();
      const held = await e.t.db.selectFrom('appointment_holds').select(['kind', sql<string>`lower(during)`.as('start')]).where('appointment_id', '=', o.id).execute();
      if (o.op === 'cancel') {
        // Evaluated before the cancel, or never: no evaluation after it.
        expect([o.id, h]).toEqual([o.id, expect.stringMatching(/^create( evaluate:confirmed)? cancel$/)]);
        expect(r.appointment_status).toBe('cancelled');
        expect(held).toEqual([]);
      } else {
        // The new time is settled once, after the reschedule; the booking itself maybe before it.
        expect([o.id, h]).toEqual([o.id, expect.stringMatching(/^create( evaluate:confirmed)? reschedule evaluate:rescheduled$/)]);
        expect(r).toMatchObject({ appointment_status: 'rescheduled', pending_start_time: null, pending_end_time: null });
        expect(r.start_time.getTime()).toBe(new Date(o.to).getTime());
        expect(held.map((x) => [x.kind, new Date(x.start).getTime()])).toEqual([['current', new Date(o.to).getTime()]]);
      }
      // One delivered event per evaluation.
      expect([o.id, events.get(o.id)]).toEqual([o.id, h.split(' ').filter((x) => x.startsWith('evaluate:')).length]);
    }
  });
});
