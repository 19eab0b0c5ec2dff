/**
 * Availability reads its schedule data in one statement (issue #20 §6, docs/performance.md): the
 * provider-locations, then durations, overrides, weekly blocks, calendar timeslots, held time and
 * time off together, whatever the number of provider-locations; and the slots are those the
 * endpoint answers with, booked time and time off included.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatementMeter } from '../../bench/statement-meter.js';
import { computeAvailability } from '../../src/domain/availability/slot-lists.js';
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
});
