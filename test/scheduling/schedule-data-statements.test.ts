/**
 * Availability reads its schedule data in one statement (issue #20 §6, docs/performance.md): the
 * provider-locations, then durations, overrides, weekly blocks, calendar timeslots, held time and
 * time off together, whatever the number of provider-locations; and the slots are those the
 * endpoint answers with, booked time and time off included. With kept schedule data
 * (docs/scheduling.md, "Kept schedule data") a request is one statement in all: the versions and
 * held time when everything is kept and current, everything fresh when nothing is; a moved version
 * adds the fresh read of what it covers.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatementMeter } from '../../bench/statement-meter.js';
import { computeAvailability, availabilityWindows, walkAvailability } from '../../src/domain/availability/slot-lists.js';
import { availabilitySpan } from '../../src/domain/availability/kept-availability.js';
import { loadKeptSchedules } from '../../src/domain/availability/kept-load.js';
import { KeptSchedules } from '../../src/domain/availability/kept-schedules.js';
import { LocalClock } from '../../src/domain/scheduling/local-time.js';
import type { Db } from '../../src/db/database.js';
import { engineName } from '../helpers/db.js';
import { otherHandle } from '../appointments/evaluator-handles.js';
import { book, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from '../appointments/fixtures.js';

describe(`availability's schedule data in one statement (${engineName})`, () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv();
  });
  afterAll(async () => e.close());

  it('two statements for any number of provider-locations, and the same slots as the endpoint', async () => {
    const day = nyDate(9);
    const open = await slots(e, PL.ny, { start: day, end: day });
    expect((await book(e, PL.ny, open[1]!.start_time)).statusCode).toBe(200);
    await sql`INSERT INTO time_off (id, env, practice_id, provider_id, start_date, end_date) VALUES (${`to_${randomUUID()}`}, 'sandbox', 'pt_t', 'pr_phx', ${day}, ${day})`.execute(e.t.db);

    const meter = new StatementMeter();
    const other = await otherHandle(e.t, { wrapDialect: meter.wrap });
    try {
      for (const ids of [[PL.ny], [PL.ny, PL.phx, PL.hnl]]) {
        meter.reset();
        const got = await computeAvailability(other.db, { env: 'sandbox', providerLocationIds: ids, visitReasonId: 'pc_t30', patientType: 'new', from: day, to: day });
        expect(meter.snapshot().statements).toBe(2);
        for (const id of ids) {
          const endpoint = (await slots(e, id, { start: day, end: day })).map((s) => s.start_time);
          expect(got.get(id)!.slots.map((s) => s.startTime)).toEqual(endpoint);
        }
      }
    } finally {
      await other.close();
    }
    // What the data held: the booked slot is gone, the provider on time off has none.
    const after = (await slots(e, PL.ny, { start: day, end: day })).map((s) => s.start_time);
    expect(after).not.toContain(open[1]!.start_time);
    expect(after.length).toBeGreaterThan(0);
    expect(await slots(e, PL.phx, { start: day, end: day })).toEqual([]);
  });

  it('kept schedule data: one statement per request, cold or warm, for one or several provider-locations; a moved version reads again', async () => {
    const day = nyDate(10);
    const keep = new KeptSchedules();
    const meter = new StatementMeter();
    const other = await otherHandle(e.t, { wrapDialect: meter.wrap });
    const clock = new LocalClock();
    const request = async (db: Db, ids: string[]) => {
      meter.reset();
      const now = new Date();
      const load = await loadKeptSchedules(db, keep, {
        env: 'sandbox', developerId: e.dev.developer_id, ids, visitReasonId: 'pc_t30', span: availabilitySpan(new LocalClock(), now, day, day), withHolds: true,
      });
      const statements = meter.snapshot().statements;
      const pls = new Map(ids.map((id) => [id, load.pls.get(id)!]));
      const walk = { visitReasonId: 'pc_t30', patientType: 'new' as const, now, clock, from: day, to: day };
      const got = walkAvailability(pls, load.data, availabilityWindows(pls, walk).windows, walk);
      expect(load.statements).toBe(statements);
      return { statements, starts: (id: string) => got.get(id)!.slots.map((s) => s.startTime) };
    };
    const endpoint = async (id: string) => (await slots(e, id, { start: day, end: day })).map((s) => s.start_time);
    try {
      const cold = await request(other.db, [PL.ny]);
      expect(cold.statements).toBe(1);
      expect(cold.starts(PL.ny)).toEqual(await endpoint(PL.ny));
      const warm = await request(other.db, [PL.ny]);
      expect(warm.statements).toBe(1);
      expect(warm.starts(PL.ny)).toEqual(cold.starts(PL.ny));
      // Several: the kept one and two not kept in one statement, then all kept in one.
      const three = [PL.ny, PL.phx, PL.hnl];
      for (let round = 0; round < 2; round++) {
        const r = await request(other.db, three);
        expect(r.statements).toBe(1);
        for (const id of three) expect(r.starts(id)).toEqual(await endpoint(id));
      }
      expect(keep.size).toBe(3);

      // A booking: still one statement (held time is read each time), and its slot is gone.
      const open = await endpoint(PL.ny);
      expect((await book(e, PL.ny, open[2]!)).statusCode).toBe(200);
      const afterBooking = await request(other.db, three);
      expect(afterBooking.statements).toBe(1);
      expect(afterBooking.starts(PL.ny)).not.toContain(open[2]);
      expect(afterBooking.starts(PL.ny)).toEqual(await endpoint(PL.ny));

      // Time off moves the provider's calendar version: its provider-location is read again (a
      // second statement), the others stay kept; then one statement again.
      await sql`INSERT INTO time_off (id, env, practice_id, provider_id, start_date, end_date) VALUES (${`to_${randomUUID()}`}, 'sandbox', 'pt_t', 'pr_hnl', ${day}, ${day})`.execute(e.t.db);
      const afterTimeOff = await request(other.db, three);
      expect(afterTimeOff.statements).toBe(2);
      expect(afterTimeOff.starts(PL.hnl)).toEqual([]);
      expect(afterTimeOff.starts(PL.ny)).toEqual(afterBooking.starts(PL.ny));
      expect((await request(other.db, three)).statements).toBe(1);

      // A directory write moves the directory version: everything is read again, once.
      await sql`UPDATE weekly_schedules SET end_local = '09:00' WHERE env = 'sandbox' AND provider_location_id = ${PL.phx} AND start_local = '08:00'`.execute(e.t.db);
      const afterDirectory = await request(other.db, three);
      expect(afterDirectory.statements).toBe(2);
      expect(afterDirectory.starts(PL.phx)).toEqual(await endpoint(PL.phx));
      expect(afterDirectory.starts(PL.phx).filter((s) => s.includes('T08:')).length).toBe(2);
      expect((await request(other.db, three)).statements).toBe(1);
    } finally {
      await other.close();
    }
  });

  it('kept entries are per environment and developer, and bounded', () => {
    const keep = new KeptSchedules(2);
    const span = { fromMs: 0, toMs: 1 };
    const pl = (id: string) => ({ id, providerId: 'pr', locationId: 'lo', practiceId: 'pt', timeZone: 'UTC', active: true, confirmationType: 'auto' as const, visitType: 'in_person' as const, isProviderResource: false, locationPhone: null, locationPhoneExtension: null, visitReasonIds: [], defaultVisitReasonId: null, requiredFields: [] });
    const entry = (id: string) => ({ directory: '1', calendar: '0', pl: pl(id), blocks: [], overrides: undefined, pushed: [], timeOff: [] });
    keep.setProviderLocation('sandbox', 'dev_a', span, entry('a'));
    expect(keep.getProviderLocation('sandbox', 'dev_a', 'a', span)).toBeDefined();
    expect(keep.getProviderLocation('production', 'dev_a', 'a', span)).toBeUndefined();
    expect(keep.getProviderLocation('sandbox', 'dev_b', 'a', span)).toBeUndefined();
    expect(keep.getProviderLocation('sandbox', 'dev_a', 'a', { fromMs: 0, toMs: 2 })).toBeUndefined();
    keep.setProviderLocation('sandbox', 'dev_a', span, entry('b'));
    keep.getProviderLocation('sandbox', 'dev_a', 'a', span); // a is now the most recently used
    keep.setProviderLocation('sandbox', 'dev_a', span, entry('c'));
    expect(keep.size).toBe(2);
    expect(keep.getProviderLocation('sandbox', 'dev_a', 'b', span)).toBeUndefined();
    expect(keep.getProviderLocation('sandbox', 'dev_a', 'a', span)).toBeDefined();
    keep.setReason('sandbox', 'vr', { directory: '1', durations: null });
    expect(keep.getReason('production', 'vr')).toBeUndefined();
  });
});
