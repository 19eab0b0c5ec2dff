/** The insurance plans and weekly schedules of provider-locations in a directory write. */
import type { Transaction } from 'kysely';
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
