/**
 * Reference listings kept by directory version (src/domain/directory/kept-reference.ts;
 * docs/performance.md, "Reference listings kept by directory version"): the specialties, visit
 * reasons and insurance plans listings read their page in one statement with the directory version,
 * then, for the same page, only the version while the directory is unchanged; any change to a table
 * they read (a specialty, a visit reason, a plan, a carrier) is in the very next answer. A production
 * app whose reads handle (the replica's place) is metered, so every statement of these routes counts.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatementMeter } from '../../bench/statement-meter.js';
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

/** One listing request: its answer and the statements it sent on the reads handle. */
async function list(url: string): Promise<{ body: { total_count: number; request_id?: string; data: Record<string, unknown>[] }; statements: number }> {
  meter.reset();
  const res = await t.app.inject({ url, headers: bearer(token) });
  expect(res.statusCode, res.body).toBe(200);
  return { body: res.json(), statements: meter.snapshot().statements };
}

describe(`reference listings kept by directory version (${engineName})`, () => {
  it('specialties: one statement cold, one (the version) warm, and a renamed specialty or default visit reason at once', async () => {
    const first = await list('/v1/specialties');
    expect(first.statements).toBe(1);
    expect(first.body.data).toEqual([{ id: 'sp_t', name: 'Test', care_category: 'health', default_visit_reason_id: 'pc_t30', default_visit_reason_name: 'Thirty' }]);
    const again = await list('/v1/specialties');
    expect(again.statements).toBe(1);
    expect(again.body).toEqual(first.body);

    await sql`UPDATE specialties SET name = 'Renamed' WHERE env = 'production' AND id = 'sp_t'`.execute(t.db);
    const renamed = await list('/v1/specialties');
    expect(renamed.statements).toBe(2); // the version moved: the page is read again
    expect(renamed.body.data[0]!.name).toBe('Renamed');
    await sql`UPDATE visit_reasons SET name = 'Half an hour' WHERE env = 'production' AND id = 'pc_t30'`.execute(t.db);
    expect((await list('/v1/specialties')).body.data[0]!.default_visit_reason_name).toBe('Half an hour');
    // Another filter or page is its own entry; the same page again is kept.
    expect((await list('/v1/specialties?care_category=dental')).body).toMatchObject({ total_count: 0, data: [] });
    expect((await list('/v1/specialties?care_category=health')).body.total_count).toBe(1);
    expect((await list('/v1/specialties')).statements).toBe(1);
  });

  it('visit reasons and insurance plans: kept, and a new plan or a renamed carrier in the next answer', async () => {
    const reasons = await list('/v1/visit_reasons?specialty_id=sp_t');
    expect(reasons.body.data.map((r) => r.id)).toEqual(['pc_other', 'pc_t30', 'pc_t60']);
    expect((await list('/v1/visit_reasons?specialty_id=sp_t')).statements).toBe(1);

    const plans = await list('/v1/insurance_plans');
    expect(plans.body.data.map((p) => p.id)).toEqual(['ip_t', 'ip_u']);
    expect(plans.body.data[0]).toMatchObject({ carrier: { id: 'ic_t', name: 'Carrier' }, plan_type: 'ppo', network_type: 'ppo', coverage_area: { is_national: true, states: null } });
    expect(String((plans.body.data[0]!.ref_metadata as { created_timestamp_utc: string }).created_timestamp_utc)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const warm = await list('/v1/insurance_plans');
    expect(warm.statements).toBe(1);
    expect(warm.body).toEqual({ ...plans.body, request_id: warm.body.request_id });

    await sql`UPDATE insurance_carriers SET name = 'Carrier Two' WHERE env = 'production' AND id = 'ic_t'`.execute(t.db);
    const renamed = await list('/v1/insurance_plans');
    expect(renamed.body.data.map((p) => (p.carrier as { name: string }).name)).toEqual(['Carrier Two', 'Carrier Two']);
    await sql`INSERT INTO insurance_plans (env, id, carrier_id, name, plan_type, program_type, status, care_categories, is_national, states)
      VALUES ('production', 'ip_a', 'ic_t', 'Plan A', 'hmo', 'medicare', 'active', ARRAY['health'], true, NULL)`.execute(t.db);
    const added = await list('/v1/insurance_plans');
    expect(added.body.total_count).toBe(3);
    expect(added.body.data.map((p) => p.id)).toEqual(['ip_a', 'ip_t', 'ip_u']);
    expect((await list('/v1/insurance_plans?program_type=medicare')).body.data.map((p) => p.id)).toEqual(['ip_a']);
  });
});
