/**
 * A provider-location's booking settings, set by its practice (docs/scheduling.md, "Settings"):
 * manual or automatic confirmation, the patient fields a booking must carry, whose booking requests
 * it takes (in network, out of network, self-pay), and the insurance plans it accepts. The values
 * are those of the directory document's provider-location record (docs/directory-format.md) and
 * pass the same checks; fields left out keep their stored value.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { conflict, invalidFields, type FieldError } from '../../errors.js';
import { auditScheduleChange } from './audit.js';
import { practiceProviderLocation, type PracticeCaller } from './scope.js';

export type PayerKind = 'in_network' | 'out_of_network' | 'self_pay';

export interface ProviderLocationSettingsInput {
  confirmation_type?: 'auto' | 'manual' | undefined;
  required_fields?: string[] | undefined;
  accepts_booking_requests_from?: PayerKind[] | undefined;
  insurance_plan_ids?: string[] | undefined;
}

/**
 * Updates the settings of provider-location `providerLocationId` of the caller's practice
 * (`not_found` otherwise). Unknown insurance plans are `invalid`, each named; plans of a practice
 * that manages insurance at practice level are a `conflict` (as for insurance mappings). A new
 * setting applies to the next booking (the directory version moves, so kept booking contexts are read again).
 * Writes its audit row (`requestId` in it) in the same transaction.
 */
export async function updateProviderLocationSettings(
  db: Kysely<Database>,
  caller: PracticeCaller,
  providerLocationId: string,
  input: ProviderLocationSettingsInput,
  opts: { requestId?: string } = {},
): Promise<void> {
  const pl = await practiceProviderLocation(db, caller, providerLocationId);
  const plans = input.insurance_plan_ids ? [...new Set(input.insurance_plan_ids)] : undefined;
  if (plans) {
    const errors: FieldError[] = [];
    const known = new Set(
      plans.length
        ? (await db.selectFrom('insurance_plans').select('id').where('env', '=', caller.env).where('id', '=', sql<string>`ANY(${plans}::text[])`).execute()).map((r) => r.id)
        : [],
    );
    input.insurance_plan_ids!.forEach((id, k) => {
      if (!known.has(id)) errors.push({ field: `insurance_plan_ids[${k}]`, message: `unknown insurance plan ${id}` });
    });
    if (errors.length) throw invalidFields(errors);
    const practice = await db.selectFrom('practices').select('insurance_managed_at_practice').where('env', '=', caller.env).where('id', '=', pl.practiceId).executeTakeFirst();
    if (practice?.insurance_managed_at_practice) {
      throw conflict('this practice manages insurance plans at practice level; a provider location has no plan list of its own', 'insurance_plan_ids');
    }
  }
  await db.transaction().execute(async (trx) => {
    const set = {
      ...(input.confirmation_type !== undefined ? { confirmation_type: input.confirmation_type } : {}),
      ...(input.required_fields !== undefined ? { required_fields: [...new Set(input.required_fields)] } : {}),
      ...(input.accepts_booking_requests_from !== undefined ? { accepts_booking_requests_from: [...new Set(input.accepts_booking_requests_from)] } : {}),
    };
    if (Object.keys(set).length) {
      await trx.updateTable('provider_locations').set(set).where('env', '=', caller.env).where('id', '=', pl.id).execute();
    }
    if (plans) {
      await trx.deleteFrom('provider_location_insurance_plans').where('env', '=', caller.env).where('provider_location_id', '=', pl.id).execute();
      if (plans.length) {
        await trx.insertInto('provider_location_insurance_plans')
          .values(plans.map((insurance_plan_id) => ({ env: caller.env, provider_location_id: pl.id, insurance_plan_id }))).execute();
      }
    }
    await auditScheduleChange(trx, caller, { action: 'schedule:settings_changed', providerId: pl.providerId, providerLocationId: pl.id, requestId: opts.requestId });
  });
}
