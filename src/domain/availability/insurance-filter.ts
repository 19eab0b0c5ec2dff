/**
 * Which provider-locations accept an insurance plan or any plan of a carrier (docs/api/availability.md#availability-request `insurance_plan_id`, `insurance_carrier_id`): the plans mapped to the
 * provider-location, or to its practice when the practice manages insurance.
 */
import { sql, type Kysely } from 'kysely';
import type { Database, Env } from '../../db/schema.js';

export async function acceptingInsurance(
  db: Kysely<Database>,
  env: Env,
  providerLocationIds: string[],
  filter: { planId?: string; carrierId?: string },
): Promise<Set<string>> {
  if (providerLocationIds.length === 0) return new Set();
  const planCond = filter.planId ? sql`ip.id = ${filter.planId}` : sql`true`;
  const carrierCond = filter.carrierId ? sql`ip.carrier_id = ${filter.carrierId}` : sql`true`;
  const rows = await sql<{ id: string }>`
    SELECT pl.id FROM provider_locations pl
    JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    JOIN practices pr ON pr.env = p.env AND pr.id = p.practice_id
    WHERE pl.env = ${env} AND pl.id IN (${sql.join(providerLocationIds)}) AND EXISTS (
      SELECT 1 FROM insurance_plans ip
      WHERE ip.env = pl.env AND ${planCond} AND ${carrierCond} AND (
        (NOT pr.insurance_managed_at_practice AND EXISTS (SELECT 1 FROM provider_location_insurance_plans m
           WHERE m.env = pl.env AND m.provider_location_id = pl.id AND m.insurance_plan_id = ip.id))
        OR (pr.insurance_managed_at_practice AND EXISTS (SELECT 1 FROM practice_insurance_plans m
           WHERE m.env = pl.env AND m.practice_id = pr.id AND m.insurance_plan_id = ip.id))))`.execute(db);
  return new Set(rows.rows.map((r) => r.id));
}
