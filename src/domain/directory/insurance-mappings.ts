/**
 * A provider-location's insurance mappings (docs/api/directory.md#reference-data, docs/api/directory.md#insurance-mappings): the plans
 * it accepts, the plans it could accept (active, covering its state, of its care categories) grouped
 * by carrier and network, and asynchronous change requests applied by a background job
 * (`applyPendingInsuranceMappings`, run by src/jobs/insurance-mappings.ts).
 */
import { sharedWithOtherDevelopers } from '../sandbox/shared-writes.js';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { prefixedId } from '../../lib/ids.js';
import type { DirectoryCaller } from './visible.js';

export type MappingOperation = 'Add' | 'Remove' | 'Replace';

export interface InsuranceMappings {
  insurance_plan_mappings: { insurance_plan_id: string }[];
  eligible_insurances: {
    insurance_carrier_id: string;
    insurance_carrier_networks: { program_type: string; network_type: string; insurance_plan_ids: string[] }[];
  }[];
}

interface PlContext {
  id: string;
  practice_id: string;
  managed_at_practice: boolean;
  state: string;
  care_categories: string[] | null;
}

async function plContext(db: Db, caller: DirectoryCaller, plId: string): Promise<PlContext | undefined> {
  const { rows } = await sql<PlContext>`
    SELECT pl.id, pt.id AS practice_id, pt.insurance_managed_at_practice AS managed_at_practice, l.state,
      (SELECT array_agg(DISTINCT s.care_category) FROM specialties s WHERE s.env = p.env AND s.id = ANY(p.specialty_ids)) AS care_categories
    FROM developer_provider_locations dpl
    JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id AND pl.active
    JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    JOIN practices pt ON pt.env = p.env AND pt.id = p.practice_id
    JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
    WHERE dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId} AND dpl.provider_location_id = ${plId}`.execute(db);
  return rows[0];
}

/** The mappings of `plId`, or undefined when it is not in the caller's directory. */
export async function getInsuranceMappings(db: Db, caller: DirectoryCaller, plId: string): Promise<InsuranceMappings | undefined> {
  const ctx = await plContext(db, caller, plId);
  if (!ctx) return undefined;
  const mapped = ctx.managed_at_practice
    ? await db.selectFrom('practice_insurance_plans').select('insurance_plan_id').where('env', '=', caller.env)
        .where('practice_id', '=', ctx.practice_id).orderBy('insurance_plan_id').execute()
    : await db.selectFrom('provider_location_insurance_plans').select('insurance_plan_id').where('env', '=', caller.env)
        .where('provider_location_id', '=', plId).orderBy('insurance_plan_id').execute();
  const cats = ctx.care_categories?.length ? ctx.care_categories : null;
  const { rows } = await sql<{ carrier_id: string; program_type: string; plan_type: string; ids: string[] }>`
    SELECT carrier_id, program_type, plan_type, array_agg(id ORDER BY id) AS ids
    FROM insurance_plans
    WHERE env = ${caller.env} AND status = 'active'
      AND (is_national OR ${ctx.state}::text = ANY(states))
      AND (${cats}::text[] IS NULL OR care_categories && ${cats}::text[])
    GROUP BY carrier_id, program_type, plan_type
    ORDER BY carrier_id, program_type, plan_type`.execute(db);
  const carriers = new Map<string, InsuranceMappings['eligible_insurances'][number]>();
  for (const r of rows) {
    let c = carriers.get(r.carrier_id);
    if (!c) carriers.set(r.carrier_id, (c = { insurance_carrier_id: r.carrier_id, insurance_carrier_networks: [] }));
    c.insurance_carrier_networks.push({ program_type: r.program_type, network_type: r.plan_type, insurance_plan_ids: r.ids });
  }
  return {
    insurance_plan_mappings: mapped.map((m) => ({ insurance_plan_id: m.insurance_plan_id })),
    eligible_insurances: [...carriers.values()],
  };
}

export type MappingRequestResult =
  | { kind: 'accepted'; requestId: string }
  | { kind: 'not_found' }
  | { kind: 'practice_managed' }
  | { kind: 'unknown_plans'; ids: string[] }
  /** Sandbox only: other developers' directories hold the provider-location too (docs/decisions/0007). */
  | { kind: 'shared_in_sandbox' };

/** Records a change request (docs/api/directory.md#insurance-mappings); the job applies it shortly after. */
export async function requestInsuranceMappingChange(
  db: Db,
  caller: DirectoryCaller,
  input: { providerLocationId: string; operation: MappingOperation; insurancePlanIds: string[] },
): Promise<MappingRequestResult> {
  const ctx = await plContext(db, caller, input.providerLocationId);
  if (!ctx) return { kind: 'not_found' };
  if (ctx.managed_at_practice) return { kind: 'practice_managed' };
  if (caller.env === 'sandbox' && (await sharedWithOtherDevelopers(db, caller, { providerLocationIds: [input.providerLocationId] })).length) {
    return { kind: 'shared_in_sandbox' };
  }
  const ids = [...new Set(input.insurancePlanIds)];
  if (ids.length) {
    const found = await db.selectFrom('insurance_plans').select('id').where('env', '=', caller.env).where('id', 'in', ids).execute();
    const known = new Set(found.map((f) => f.id));
    const unknown = ids.filter((i) => !known.has(i));
    if (unknown.length) return { kind: 'unknown_plans', ids: unknown };
  }
  const id = prefixedId('imr');
  await db
    .insertInto('insurance_mapping_requests')
    .values({
      id,
      env: caller.env,
      developer_id: caller.developerId,
      provider_location_id: input.providerLocationId,
      operation: input.operation,
      insurance_plan_ids: ids,
      error: null,
    })
    .execute();
  return { kind: 'accepted', requestId: id };
}

/**
 * One pass of the background job: claims up to `limit` pending requests of `env` (row locks, SKIP LOCKED, so
 * several processes never apply one twice), applies them in order of arrival, and returns how many
 * it handled.
 */
export async function applyPendingInsuranceMappings(db: Db, env: Env, limit = 100): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ id: string; provider_location_id: string; operation: MappingOperation; insurance_plan_ids: string[] }>`
      SELECT id, provider_location_id, operation, insurance_plan_ids FROM insurance_mapping_requests
      WHERE status = 'pending' AND env = ${env}
      ORDER BY created_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED`.execute(trx);
    for (const r of rows) {
      const managed = await sql<{ m: boolean }>`
        SELECT pt.insurance_managed_at_practice AS m FROM provider_locations pl
        JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
        JOIN practices pt ON pt.env = p.env AND pt.id = p.practice_id
        WHERE pl.env = ${env} AND pl.id = ${r.provider_location_id}`.execute(trx);
      if (managed.rows[0]?.m !== false) {
        await trx.updateTable('insurance_mapping_requests')
          .set({ status: 'failed', applied_at: sql<Date>`now()`, error: managed.rows[0] ? 'insurance is managed at practice level' : 'provider-location not found' })
          .where('id', '=', r.id).execute();
        continue;
      }
      const del = trx.deleteFrom('provider_location_insurance_plans').where('env', '=', env).where('provider_location_id', '=', r.provider_location_id);
      if (r.operation === 'Replace') await del.execute();
      if (r.operation === 'Remove' && r.insurance_plan_ids.length) await del.where('insurance_plan_id', 'in', r.insurance_plan_ids).execute();
      if ((r.operation === 'Add' || r.operation === 'Replace') && r.insurance_plan_ids.length) {
        await trx
          .insertInto('provider_location_insurance_plans')
          .values(r.insurance_plan_ids.map((p) => ({ env, provider_location_id: r.provider_location_id, insurance_plan_id: p })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
      await trx.updateTable('insurance_mapping_requests').set({ status: 'applied', applied_at: sql<Date>`now()` }).where('id', '=', r.id).execute();
    }
    return rows.length;
  });
}
