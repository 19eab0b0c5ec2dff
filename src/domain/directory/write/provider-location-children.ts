/** The insurance plans and weekly schedules of provider-locations in a directory write. */
import { sql, type Transaction } from 'kysely';
import type { Database, Env } from '../../../db/schema.js';
import { providerLocationId, type DirectoryDocument } from '../document.js';
import { replaceChildren } from './keyed-rows.js';

/**
 * Replaces, per provider-location of `doc`, its insurance plans and its weekly schedule when the
 * document gives them (set-based: a provider-location without them keeps its own).
 */
export async function writeProviderLocationChildren(trx: Transaction<Database>, env: Env, doc: DirectoryDocument): Promise<void> {
  const pls = doc.provider_locations ?? [];
  await replaceChildren(
    trx,
    'provider_location_insurance_plans',
    'provider_location_id',
    pls.filter((p) => p.insurance_plan_ids).map((p) => providerLocationId(p.provider_id, p.location_id)),
    pls.flatMap((p) =>
      (p.insurance_plan_ids ?? []).map((insurance_plan_id) => ({ env, provider_location_id: providerLocationId(p.provider_id, p.location_id), insurance_plan_id })),
    ),
    env,
  );
  await replaceChildren(
    trx,
    'weekly_schedules',
    'provider_location_id',
    pls.filter((p) => p.weekly_schedule).map((p) => providerLocationId(p.provider_id, p.location_id)),
    pls.flatMap((p) =>
      (p.weekly_schedule ?? []).map((b) => ({
        env,
        provider_location_id: providerLocationId(p.provider_id, p.location_id),
        weekday: b.weekday,
        start_local: b.start,
        end_local: b.end,
        visit_reason_ids: b.visit_reason_ids ?? null,
        patient_type: b.patient_type ?? null,
      })),
    ),
    env,
  );
}

/**
 * Drops the practice's visit reason overrides (migration 0023) of reasons that the written providers
 * no longer accept (their `visit_reason_ids`, else their default): the one thing an import does to
 * them (docs/decisions/0019-practice-visit-reasons.md, "Re-import"). Every other override survives.
 */
export async function dropWithdrawnReasonOverrides(trx: Transaction<Database>, env: Env, doc: DirectoryDocument): Promise<void> {
  const providerIds = (doc.providers ?? []).map((p) => p.id);
  if (providerIds.length === 0) return;
  await sql`
    DELETE FROM provider_location_visit_reasons o
    USING provider_locations pl, providers p
    WHERE o.env = ${env} AND pl.env = o.env AND pl.id = o.provider_location_id
      AND p.env = pl.env AND p.id = pl.provider_id AND p.id = ANY(${providerIds}::text[])
      AND NOT (o.visit_reason_id = ANY(
        CASE WHEN cardinality(p.visit_reason_ids) > 0 THEN p.visit_reason_ids
             ELSE array_remove(ARRAY[p.default_visit_reason_id], NULL) END))`.execute(trx);
}
