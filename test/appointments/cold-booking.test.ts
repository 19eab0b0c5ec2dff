/**
 * A cold booking in one statement (src/domain/appointments/cold-booking.ts): a booking whose context
 * is not kept reads it and writes in the same statement when SQL alone can tell the request is
 * valid, and otherwise answers exactly as the two-statement path does. Counted statements prove
 * which path ran; rows written by both paths are compared column by column; a schedule change that
 * commits while the cold statement waits on the provider's calendar row stops it.
 */
import { sql, type Kysely } from 'kysely';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BookingContextCache } from '../../src/domain/appointments/booking-context-cache.js';
import { createAppointment, type CreateInput } from '../../src/domain/appointments/create.js';
import type { Principal } from '../../src/domain/credentials/principal.js';
import type { Database } from '../../src/db/schema.js';
import { DomainError } from '../../src/domain/errors.js';
import { engineName } from '../helpers/db.js';
import { createBody, nyDate, PL, schedulingEnv, type SchedulingEnv } from './fixtures.js';

describe(`cold bookings in one statement (${engineName})`, () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv();
  }, 60_000);
  afterAll(() => e?.close());

  const principal = (): Principal => ({ kind: 'client', env: 'sandbox', developerId: e.dev.developer_id, clientId: e.dev.client_id, scopes: new Set() });

  /** `db` counting the statements run through it, and how many of them were the cold statement. */
  function counting(db: Kysely<Database>) {
    const n = { all: 0, cold: 0 };
    const proxy = new Proxy(db, {
      get(target, prop) {
        if (prop !== 'executeQuery') {
          const v: unknown = Reflect.get(target, prop, target);
          return typeof v === 'function' ? v.bind(target) : v;
        }
        return (q: { sql: string }) => {
          n.all++;
          if (q.sql.includes('"_ctx"')) n.cold++;
          return target.executeQuery(q as never);
        };
      },
    });
    return { db: proxy, n };
  }

  /** A start at `hhmm` New York time `days` ahead. */
  const at = (days: number, hhmm: string) => `${nyDate(days)}T${hhmm}:00${DateTime.fromISO(`${nyDate(days)}T${hhmm}`, { zone: 'America/New_York' }).toFormat('ZZ')}`;
  const book = (db: Kysely<Database>, contexts: BookingContextCache, pl: string, start: string, over: Record<string, unknown> = {}, patientOver: Record<string, unknown> = {}, now?: Date) =>
    createAppointment(db, principal(), createBody(pl, start, over, patientOver) as CreateInput, { contexts, ...(now ? { now } : {}) });
  const rowOf = async (id: string) => (await sql<Record<string, unknown>>`SELECT * FROM appointments WHERE id = ${id}`.execute(e.t.db)).rows[0]!;
  const holdOf = async (id: string) => (await sql<{ during: string; provider_id: string }>`SELECT during::text AS during, provider_id FROM appointment_holds WHERE appointment_id = ${id}`.execute(e.t.db)).rows[0]!;
  const count = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM appointments`.execute(e.t.db)).rows[0]!.n);

  it('the first booking in a zone reads its context first; later cold bookings there are one statement and write what the checked path writes', async () => {
    const contexts = new BookingContextCache();
    const c = counting(e.t.db);
    const first = await book(c.db, contexts, PL.ny, at(20, '09:00'));
    expect(c.n).toEqual({ all: 2, cold: 0 });
    expect(contexts.zones.has('America/New_York')).toBe(true);

    // Another provider-location and day: nothing kept for it, one statement.
    c.n.all = c.n.cold = 0;
    const cold = await book(c.db, contexts, PL.ny2, at(21, '09:30'), { notes: 'cold' });
    expect(c.n).toEqual({ all: 1, cold: 1 });
    // The same booking by the two-statement path (another time): every column but the ids and times is the same.
    const checked = await createAppointment(e.t.db, principal(), createBody(PL.ny2, at(21, '10:30'), { notes: 'cold' }) as CreateInput, { coldInOneStatement: false });
    const [a, b] = [await rowOf(cold.id), await rowOf(checked.id)];
    const differ = Object.keys(a).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
    expect(differ.sort()).toEqual(['created_at', 'end_time', 'evaluate_after', 'id', 'patient_id', 'start_time', 'updated_at'].filter((k) => k in a).sort());
    expect(new Date(a.end_time as string).getTime() - new Date(a.start_time as string).getTime()).toBe(30 * 60_000);
    expect(a.evaluate_after).not.toBeNull();
    expect((await holdOf(cold.id)).provider_id).toBe('pr_ny2');
    expect(new Date((await holdOf(cold.id)).during.slice(2, 24) + 'Z').getTime()).toBe(new Date(a.start_time as string).getTime());
    // The returned record is the stored one.
    expect(cold.location_id).toBe('lo_ny');
    expect(cold.time_zone).toBe('America/New_York');
    expect(first.appointment_status).toBe('pending_booking');
  });

  it('manual confirmation, existing patients, another visit reason: one statement each, with the right columns', async () => {
    const contexts = new BookingContextCache();
    await book(e.t.db, contexts, PL.ny, at(22, '09:00')); // meets the zone
    const c = counting(e.t.db);
    const manual = await book(c.db, contexts, PL.manual, at(23, '09:00'));
    const existing = await book(c.db, contexts, PL.ny2, at(23, '09:00'), { patient_type: 'existing' });
    const sixty = await book(c.db, contexts, PL.nyElsewhere, at(23, '11:00'), { visit_reason_id: 'pc_t60' });
    expect(c.n).toEqual({ all: 3, cold: 3 });
    expect(manual.confirmation_type).toBe('manual');
    expect((await rowOf(manual.id)).evaluate_after).toBeNull();
    expect(existing.confirmation_type).toBe('pending_evaluation');
    expect(existing.end_time.getTime() - existing.start_time.getTime()).toBe(20 * 60_000);
    expect(sixty.end_time.getTime() - sixty.start_time.getTime()).toBe(60 * 60_000);
  });

  it('what SQL cannot decide is answered by the checked path: an invalid start, a daylight-saving day, time off nearby, required insurance', async () => {
    const contexts = new BookingContextCache();
    await book(e.t.db, contexts, PL.ny, at(24, '09:00'));
    const c = counting(e.t.db);
    const before = await count();
    // A start no block offers: the cold statement inserts nothing, the checks name the field.
    const off = await book(c.db, contexts, PL.ny2, at(25, '07:00')).catch((x: unknown) => x);
    expect(off).toBeInstanceOf(DomainError);
    expect((off as DomainError).kind).toBe('invalid');
    expect(JSON.stringify(off)).toContain('data.start_time');
    expect(c.n).toEqual({ all: 1, cold: 1 });
    expect(await count()).toBe(before);

    // New York's spring-forward day: not a plain day, so no cold statement; booked the checked way.
    c.n.all = c.n.cold = 0;
    const now = new Date('2027-03-01T12:00:00Z');
    const dst = await book(c.db, contexts, PL.ny2, '2027-03-14T03:00:00-04:00', {}, {}, now);
    expect(dst.start_time.toISOString()).toBe('2027-03-14T07:00:00.000Z');
    expect(c.n.cold).toBe(0);

    // Time off the day before (it ends before the start): SQL leaves it to the checks, which book it.
    await sql`INSERT INTO time_off (id, env, practice_id, provider_id, start_date, end_date) VALUES ('to_cold', 'sandbox', 'pt_t', 'pr_ny2', ${nyDate(25)}::date, ${nyDate(25)}::date)`.execute(e.t.db);
    c.n.all = c.n.cold = 0;
    await book(c.db, contexts, PL.ny2, at(26, '09:00'));
    expect(c.n).toEqual({ all: 2, cold: 1 });
    await sql`DELETE FROM time_off WHERE id = 'to_cold'`.execute(e.t.db);

    // Insurance required and missing: refused with the field named, nothing written.
    await sql`UPDATE provider_locations SET required_fields = '{patient.insurance}' WHERE env = 'sandbox' AND id = ${PL.nyElsewhere}`.execute(e.t.db);
    c.n.all = c.n.cold = 0;
    const missing = await book(c.db, contexts, PL.nyElsewhere, at(27, '09:00')).catch((x: unknown) => x);
    expect(JSON.stringify(missing)).toContain('data.patient.insurance');
    expect(c.n).toEqual({ all: 1, cold: 1 });
    const insured = await book(c.db, contexts, PL.nyElsewhere, at(27, '09:00'), {}, { insurance: { insurance_plan_id: 'ip_t', is_self_pay: false } });
    expect(insured.provider_location_id).toBe(PL.nyElsewhere);
    expect(c.n).toEqual({ all: 2, cold: 2 });
    await sql`UPDATE provider_locations SET required_fields = '{}' WHERE env = 'sandbox' AND id = ${PL.nyElsewhere}`.execute(e.t.db);
  });

  it('payer kinds and plans: an out-of-network request where only in-network is taken is refused; an unknown plan too', async () => {
    const contexts = new BookingContextCache();
    await book(e.t.db, contexts, PL.ny, at(28, '09:00'));
    await sql`UPDATE provider_locations SET accepts_booking_requests_from = '{in_network}' WHERE env = 'sandbox' AND id = ${PL.ny}`.execute(e.t.db);
    try {
      const outside = await book(e.t.db, contexts, PL.ny, at(29, '09:00'), {}, { insurance: { insurance_plan_id: 'ip_u', is_self_pay: false } }).catch((x: unknown) => x);
      expect(JSON.stringify(outside)).toContain('out_of_network');
      const selfPay = await book(e.t.db, contexts, PL.ny, at(29, '09:00')).catch((x: unknown) => x);
      expect(JSON.stringify(selfPay)).toContain('self_pay');
      const unknown = await book(e.t.db, contexts, PL.ny, at(29, '09:00'), {}, { insurance: { insurance_plan_id: 'ip_nope', is_self_pay: false } }).catch((x: unknown) => x);
      expect(JSON.stringify(unknown)).toContain('unknown insurance plan');
      const c = counting(e.t.db);
      const inNetwork = await book(c.db, contexts, PL.ny, at(29, '09:30'), {}, { insurance: { insurance_plan_id: 'ip_t', is_self_pay: false } });
      expect(inNetwork.provider_location_id).toBe(PL.ny);
      expect(c.n).toEqual({ all: 1, cold: 1 });
    } finally {
      await sql`UPDATE provider_locations SET accepts_booking_requests_from = '{in_network,out_of_network,self_pay}' WHERE env = 'sandbox' AND id = ${PL.ny}`.execute(e.t.db);
    }
  });

  it('a taken time is a conflict, and nothing is written', async () => {
    const contexts = new BookingContextCache();
    await book(e.t.db, contexts, PL.ny, at(30, '09:00'));
    const before = await count();
    const taken = await book(e.t.db, new BookingContextCache(), PL.ny, at(30, '09:00')).catch((x: unknown) => x);
    // A fresh cache has met no zone: the checked path; with the zone met, the cold statement: both conflict.
    expect((taken as DomainError).kind).toBe('conflict');
    const again = await book(e.t.db, contexts, PL.nyElsewhere, at(30, '09:00')).catch((x: unknown) => x);
    expect((again as DomainError).kind).toBe('conflict');
    expect(await count()).toBe(before);
  });

  it('time off committed while the cold statement waits on the calendar row: refused, nothing written', async () => {
    const contexts = new BookingContextCache();
    await book(e.t.db, contexts, PL.ny, at(31, '09:00'));
    const before = await count();
    const day = nyDate(32);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const inside = new Promise<void>((r) => (started = r));
    // A schedule change of pr_ny2 as the practice API makes it: the calendar row first, then the time off.
    const change = e.t.db.transaction().execute(async (trx) => {
      await sql`UPDATE calendar_versions SET version = version + 1 WHERE env = 'sandbox' AND provider_id = 'pr_ny2'`.execute(trx);
      await sql`INSERT INTO time_off (id, env, practice_id, provider_id, start_date, end_date) VALUES ('to_race', 'sandbox', 'pt_t', 'pr_ny2', ${day}::date, ${day}::date)`.execute(trx);
      started();
      await held;
    });
    await inside;
    const booking = book(e.t.db, contexts, PL.ny2, at(32, '09:00')).catch((x: unknown) => x);
    await new Promise((r) => setTimeout(r, 300));
    release();
    await change;
    const result = await booking;
    expect((result as DomainError).kind).toBe('invalid');
    expect(JSON.stringify(result)).toContain('data.start_time');
    expect(await count()).toBe(before);
    await sql`DELETE FROM time_off WHERE id = 'to_race'`.execute(e.t.db);
  });
});
