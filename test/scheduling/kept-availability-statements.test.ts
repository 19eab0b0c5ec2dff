/**
 * Statements `GET /v1/provider_locations/availability` sends on its reads handle with kept schedule
 * data (docs/scheduling.md, "Kept schedule data"; docs/performance.md, "Availability from kept
 * schedule data"): a production app whose reads handle (the replica's place) is a metered handle on
 * the test database, so every statement the route reads with is counted. One per request, cold or
 * warm, for one or several provider-locations and for the default window; a moved version adds the
 * fresh read; the insurance filter's answers are kept too.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatementMeter } from '../../bench/statement-meter.js';
import { nyDate, PL } from '../appointments/fixtures.js';
import type { TestApp } from '../helpers/app.js';
import { meteredDirectoryApp } from '../helpers/metered-reads.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';

const meter = new StatementMeter();
let t: TestApp;
let token: string;

beforeAll(async () => {
  ({ t, token } = await meteredDirectoryApp(meter));
}, 60_000);
afterAll(() => t?.close());

/** Statements on the reads handle for one availability request (answered 200). */
async function statements(ids: string[], q: Record<string, string> = {}): Promise<number> {
  meter.reset();
  const params = new URLSearchParams({ provider_location_ids: ids.join(','), visit_reason_id: 'pc_t30', patient_type: 'new', ...q });
  const res = await t.app.inject({ url: `/v1/provider_locations/availability?${params}`, headers: bearer(token) });
  expect(res.statusCode, res.body).toBe(200);
  expect((res.json() as { data: { timeslots: unknown[] }[] }).data.every((d) => d.timeslots.length > 0)).toBe(true);
  return meter.snapshot().statements;
}

describe(`availability's statements with kept schedule data (${engineName})`, () => {
  it('one per request, cold or warm; a moved version reads again once', async () => {
    const day = nyDate(6);
    const dates = { start_date_in_provider_local_time: day, end_date_in_provider_local_time: day };
    expect(await statements([PL.ny], dates)).toBe(1); // nothing kept: everything in one statement
    expect(await statements([PL.ny], dates)).toBe(1); // kept: versions and held time
    expect(await statements([PL.ny, PL.phx, PL.hnl], dates)).toBe(1); // one kept, two not
    expect(await statements([PL.ny, PL.phx, PL.hnl], dates)).toBe(1);
    expect(await statements([PL.ny])).toBe(1); // the default window: its own span
    expect(await statements([PL.ny])).toBe(1);

    await sql`INSERT INTO time_off (id, env, practice_id, provider_id, start_date, end_date, start_local, end_local)
      VALUES (${`to_${randomUUID()}`}, 'production', 'pt_t', 'pr_phx', ${day}, ${day}, '08:00', '09:00')`.execute(t.db);
    expect(await statements([PL.ny, PL.phx, PL.hnl], dates)).toBe(2); // the check, then pr_phx's data again
    expect(await statements([PL.ny, PL.phx, PL.hnl], dates)).toBe(1);

    const insured = { ...dates, insurance_plan_id: 'ip_t' };
    expect(await statements([PL.ny], insured)).toBe(2); // the insurance answer is read once …
    expect(await statements([PL.ny], insured)).toBe(1); // … then kept
  });
});
