/**
 * Moves racing a closed day (docs/scheduling.md, "Races"): a developer's reschedule (`/v1`) and a
 * practice's move (the workspace's "Move…") each check the new time against the schedule inside their
 * transaction, after taking the provider's `calendar_versions` row `FOR SHARE`, so a move and staff
 * closing the day it moves into end in exactly one order: the move committed first and the time off
 * lists it (refused, or saved with `allow_stranded`), or the time off committed first and the move is
 * refused as outside open time. Never a move saved into time off it was not listed by.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorTransition } from '../../src/domain/appointments/operator-transition.js';
import { DomainError } from '../../src/domain/errors.js';
import { staffMove } from '../../src/domain/practices/appointments/move.js';
import { addTimeOff } from '../../src/domain/practices/schedule/time-off.js';
import { PL } from '../appointments/fixtures.js';
import { engineName } from '../helpers/db.js';
import { bearer, bookAt, nyDate, practiceEnv, slots, staffOf, type PracticeEnv } from './appointment-fixtures.js';
import { staff, timeOffOutcome } from './schedule-fixtures.js';

describe(`moves racing a closed day (${engineName})`, () => {
  let e: PracticeEnv;
  beforeAll(async () => {
    e = await practiceEnv();
  });
  afterAll(async () => e?.close());

  /** Appointments of the provider whose current time, or pending time while `pending_reschedule`, starts on local `date`. */
  const onDay = async (date: string): Promise<string[]> => {
    const { rows } = await sql<{ id: string }>`
      SELECT id FROM appointments WHERE provider_id = 'pr_ny2' AND appointment_status NOT IN ('cancelled', 'booking_failed')
        AND ((start_time AT TIME ZONE time_zone)::date = ${date}::date
          OR (appointment_status = 'pending_reschedule' AND (pending_start_time AT TIME ZONE time_zone)::date = ${date}::date))
      ORDER BY id`.execute(e.t.db);
    return rows.map((r) => r.id);
  };
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('reschedules and practice moves into a day staff close: one side wins each time', async () => {
    const N = 8;
    const ROUNDS = 12;
    const tally = { savedTimeOff: 0, refusedTimeOff: 0, movesIn: 0, movesRefused: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const allow = round % 3 === 2;
      const from = 40 + 2 * round;
      const into = nyDate(41 + 2 * round);
      const booked = [];
      for (let i = 0; i < N; i++) {
        const b = await bookAt(e, PL.ny2, from, i);
        await operatorTransition(e.t.db, 'sandbox', b.id, { to: 'confirmed' });
        booked.push(b.id);
      }
      const targets = (await slots(e, PL.ny2, { start: into, end: into })).filter((s) => s.start_time.slice(11, 13) >= '08').slice(0, N);
      expect(targets).toHaveLength(N);
      // Every second move is the developer's reschedule, the others the practice's; a millisecond apart,
      // the time off before, among or after them.
      const moves = booked.map(async (id, i): Promise<string | undefined> => {
        await pause(i + (round % 4 === 0 ? 12 : 0));
        const start_time = targets[i]!.start_time;
        if (i % 2 === 0) {
          const res = await e.t.app.inject({ method: 'POST', url: '/v1/appointments/reschedule', headers: bearer(e.token), payload: { appointment_id: id, start_time } });
          if (res.statusCode === 200) return id;
          expect(res.statusCode, res.body).toBe(400);
          expect(res.json().errors[0].field).toBe('start_time');
          return undefined;
        }
        try {
          await staffMove(e.t.db, staffOf('pt_t'), id, { start_time });
          return id;
        } catch (x) {
          expect(x).toBeInstanceOf(DomainError);
          expect((x as DomainError).kind).toBe('invalid');
          expect((x as DomainError).errors[0]!.field).toBe('start_time');
          return undefined;
        }
      });
      const timeOff = (async () => {
        await pause((round * 5) % 14);
        return addTimeOff(e.t.db, staff(), { provider_id: 'pr_ny2', start_date: into, end_date: into }, { allowStranded: allow }).catch((x: unknown) => x);
      })();
      const [answers, off] = await Promise.all([Promise.all(moves), timeOff]);
      const moved = answers.filter((id): id is string => id !== undefined).sort();
      // Every answered move holds its new time, none else.
      expect(await onDay(into), `round ${round}`).toEqual(moved);
      tally.movesIn += moved.length;
      tally.movesRefused += N - moved.length;
      tally[timeOffOutcome(off, allow, moved, `round ${round}`) === 'saved' ? 'savedTimeOff' : 'refusedTimeOff']++;
    }
    console.log(`moves race (${engineName}):`, JSON.stringify(tally));
    expect(tally.savedTimeOff + tally.refusedTimeOff).toBe(ROUNDS);
  }, 120_000);
});
