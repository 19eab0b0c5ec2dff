/**
 * Stranded bookings and races (docs/scheduling.md, "Stranded bookings", "Races"): a schedule change
 * that would leave live appointments outside open time lists them (dry run), is refused with them
 * (409 as a `conflict`) or saved with `allow_stranded`; and staff closing a day while bookings
 * arrive for it: exactly one side wins each time, nothing half-written.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { addTimeOff } from '../../src/domain/practices/schedule/time-off.js';
import { replaceWeeklyHours } from '../../src/domain/practices/schedule/weekly-hours.js';
import { engineName } from '../helpers/db.js';
import { bearer } from '../helpers/auth.js';
import { book, createBody, nyDate, PL, slots, type SchedulingEnv } from '../appointments/fixtures.js';
import { practiceScheduleEnv, staff, timeOffOutcome } from './schedule-fixtures.js';

describe(`practice schedules: stranded bookings and races (${engineName})`, () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await practiceScheduleEnv();
  });
  afterAll(async () => e.close());

  const liveOn = async (providerId: string, date: string): Promise<string[]> => {
    const { rows } = await sql<{ id: string }>`
      SELECT id FROM appointments WHERE provider_id = ${providerId} AND appointment_status NOT IN ('cancelled', 'booking_failed')
        AND (start_time AT TIME ZONE time_zone)::date = ${date}::date ORDER BY id`.execute(e.t.db);
    return rows.map((r) => r.id);
  };
  const timeOffOn = async (providerId: string, date: string): Promise<number> =>
    Number((await sql<{ n: string }>`SELECT count(*) AS n FROM time_off WHERE provider_id = ${providerId} AND start_date = ${date}::date`.execute(e.t.db)).rows[0]!.n);

  it('time off over a live booking: dry run lists it, a save without allow_stranded is refused, with it saved', async () => {
    const d = nyDate(5);
    const day = await slots(e, PL.ny, { start: d, end: d });
    const ten = day.find((s) => s.start_time.includes('T10:00'))!.start_time;
    const res = await book(e, PL.ny, ten);
    expect(res.statusCode).toBe(200);
    const id: string = res.json().data.appointment_id;
    const cancelled = await book(e, PL.ny, day.find((s) => s.start_time.includes('T11:00'))!.start_time);
    await e.t.app.inject({ method: 'POST', url: '/v1/appointments/cancel', headers: bearer(e.token),
      payload: { appointment_id: cancelled.json().data.appointment_id, cancellation_reason_type: 'other_patient_reason', cancellation_reason: 'x' } });
    const input = { provider_id: 'pr_ny', start_date: d, end_date: d, start_local: '09:00', end_local: '13:00' };

    const dry = await addTimeOff(e.t.db, staff(), input, { dryRun: true });
    expect(dry.saved).toBe(false);
    expect(dry.stranded).toEqual([{ appointment_id: id, provider_location_id: PL.ny, start_time: ten, status: 'pending_booking', reason: 'outside_open_time' }]);
    expect(await timeOffOn('pr_ny', d)).toBe(0);

    const refused = await addTimeOff(e.t.db, staff(), input).catch((x: unknown) => x);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).kind).toBe('conflict');
    expect((refused as DomainError).errors).toHaveLength(1);
    expect((refused as DomainError).errors[0]!.field).toBe('stranded[0]');
    expect((refused as DomainError).message).toContain(id);
    expect((refused as DomainError).message).not.toMatch(/Ada|Lovelace|2125550123/);
    expect(await timeOffOn('pr_ny', d)).toBe(0);

    // Time off elsewhere that day strands nothing.
    expect((await addTimeOff(e.t.db, staff(), { ...input, start_local: '14:00', end_local: '15:00' })).stranded).toEqual([]);
    const allowed = await addTimeOff(e.t.db, staff(), input, { allowStranded: true });
    expect(allowed.saved).toBe(true);
    expect(allowed.stranded.map((s) => s.appointment_id)).toEqual([id]);
    expect(await liveOn('pr_ny', d)).toEqual([id]); // the booking is left as it was
    // Already outside open time: a later change over it does not list it again.
    expect(await addTimeOff(e.t.db, staff(), { ...input, start_local: '10:15', end_local: '10:45' })).toMatchObject({ saved: true, stranded: [] });
  });

  it('weekly hours that no longer cover a booking strand it; hours that still cover it do not', async () => {
    const d = nyDate(9);
    const weekday = new Date(`${d}T12:00:00Z`).getUTCDay() || 7;
    const at = (await slots(e, PL.ny2, { start: d, end: d })).find((s) => s.start_time.includes('T10:30'))!.start_time;
    const res = await book(e, PL.ny2, at);
    expect(res.statusCode).toBe(200);
    const id: string = res.json().data.appointment_id;
    const others = [1, 2, 3, 4, 5, 6, 7].filter((w) => w !== weekday).map((w) => ({ weekday: w, start: '08:00', end: '18:00' }));
    const dry = await replaceWeeklyHours(e.t.db, staff(), PL.ny2, [...others, { weekday, start: '12:00', end: '18:00' }], { dryRun: true });
    expect(dry.stranded.map((s) => [s.appointment_id, s.start_time])).toEqual([[id, at]]);
    expect((await slots(e, PL.ny2, { start: d, end: d })).some((s) => s.start_time.includes('T08:00'))).toBe(true); // nothing saved
    const refused = await replaceWeeklyHours(e.t.db, staff(), PL.ny2, [...others, { weekday, start: '12:00', end: '18:00' }]).catch((x: DomainError) => x);
    expect((refused as DomainError).kind).toBe('conflict');
    // Hours moved by ten minutes still cover 10:30–11:00: not stranded, saved.
    const shifted = await replaceWeeklyHours(e.t.db, staff(), PL.ny2, [...others, { weekday, start: '08:10', end: '17:00' }]);
    expect(shifted).toMatchObject({ saved: true, stranded: [] });
    // A block only for existing patients does not cover a new patient's booking.
    const wrongType = await replaceWeeklyHours(e.t.db, staff(), PL.ny2, [...others, { weekday, start: '08:00', end: '18:00', patient_type: 'existing' }], { dryRun: true });
    expect(wrongType.stranded.map((s) => s.appointment_id)).toEqual([id]);
  });

  it(`staff closing a day while bookings arrive: one side wins each time, nothing half-written (${engineName})`, async () => {
    const N = 10;
    const tally = { refusedTimeOff: 0, savedTimeOff: 0, bookingsIn: 0, bookingsRefused: 0 };
    for (let round = 0; round < 12; round++) {
      const allow = round % 3 === 2;
      const d = nyDate(30 + round);
      const open = (await slots(e, PL.manual, { start: d, end: d })).filter((s) => s.start_time.slice(11, 13) >= '08').slice(0, N);
      // Bookings are staggered a millisecond apart; the time off starts before, among or after them.
      const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const bookings = open.map(async (s, i) => {
        await pause(i + (round % 4 === 0 ? 15 : 0));
        return e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(e.token), payload: createBody(PL.manual, s.start_time) });
      });
      const timeOff = (async () => {
        await pause((round * 5) % 16);
        return addTimeOff(e.t.db, staff(), { provider_id: 'pr_man', start_date: d, end_date: d }, { allowStranded: allow }).catch((x: unknown) => x);
      })();
      const [results, off] = await Promise.all([Promise.all(bookings), timeOff]);
      const ok = results.filter((r) => r.statusCode === 200).map((r) => r.json().data.appointment_id as string).sort();
      for (const r of results.filter((x) => x.statusCode !== 200)) {
        expect(r.statusCode).toBe(400);
        expect(r.json().errors[0].field).toBe('data.start_time');
      }
      const live = await liveOn('pr_man', d);
      expect(live).toEqual(ok); // every answered booking is stored whole, none else
      const holds = await sql<{ n: string }>`SELECT count(*) AS n FROM appointment_holds WHERE appointment_id = ANY(${ok}::text[])`.execute(e.t.db);
      expect(Number(holds.rows[0]!.n)).toBe(ok.length);
      tally.bookingsIn += ok.length;
      tally.bookingsRefused += N - ok.length;
      const outcome = timeOffOutcome(off, allow, ok, `round ${round}`);
      expect(await timeOffOn('pr_man', d)).toBe(outcome === 'saved' ? 1 : 0);
      tally[outcome === 'saved' ? 'savedTimeOff' : 'refusedTimeOff']++;
    }
    console.log(`race (${engineName}):`, JSON.stringify(tally));
    expect(tally.savedTimeOff + tally.refusedTimeOff).toBe(12);
  });
});
