/**
 * The reference sections of a directory write: specialties, visit reasons, insurance carriers and
 * plans, practices and the plans a practice manages.
 */
import { sql, type Transaction } from 'kysely';
import type { Database, Env } from '../../../db/schema.js';
import type { DirectoryDocument } from '../document.js';
import { changedColumns, replaceChildren, upsert } from './keyed-rows.js';

/**
 * Writes the reference sections of `doc`; returns the ids of the existing specialties it renamed
 * (a renamed specialty changes `main_specialty_name` of its providers' entities: a profile update).
 */
export async function writeReferenceSections(trx: Transaction<Database>, env: Env, doc: DirectoryDocument): Promise<Set<string>> {
  const now = sql<Date>`now()`;
  // Specialties and visit reasons refer to each other (default visit reason); the FK runs one way only.
  const specialtyRows = (doc.specialties ?? []).map((s) => ({ env, ...s }));
  const renamedSpecialties = await changedColumns(trx, 'specialties', env, specialtyRows, ['name']);
  await upsert(trx, 'specialties', specialtyRows, ['name', 'care_category', 'default_visit_reason_id']);
  await upsert(
    trx,
    'visit_reasons',
    (doc.visit_reasons ?? []).map((v) => ({
      env,
      id: v.id,
      name: v.name,
      specialty_id: v.specialty_id,
      duration_new_minutes: v.duration_minutes.new,
      duration_existing_minutes: v.duration_minutes.existing,
    })),
    ['name', 'specialty_id', 'duration_new_minutes', 'duration_existing_minutes'],
  );
  await upsert(trx, 'insurance_carriers', (doc.insurance_carriers ?? []).map((c) => ({ env, ...c })), ['name']);
  await upsert(
    trx,
    'insurance_plans',
    (doc.insurance_plans ?? []).map((p) => ({
      env,
      id: p.id,
      carrier_id: p.carrier_id,
      name: p.name,
      plan_type: p.plan_type,
      program_type: p.program_type,
      status: p.status ?? 'active',
      care_categories: p.care_categories,
      is_national: p.coverage_area.is_national,
      states: p.coverage_area.is_national ? null : p.coverage_area.states,
    })),
    ['carrier_id', 'name', 'plan_type', 'program_type', 'status', 'care_categories', 'is_national', 'states'],
    { updated_at: now },
  );
  await upsert(
    trx,
    'practices',
    (doc.practices ?? []).map((p) => ({
      env,
      id: p.id,
      name: p.name,
      insurance_managed_at_practice: p.insurance_managed_at_practice ?? false,
    })),
    ['name', 'insurance_managed_at_practice'],
    { updated_at: now },
  );
  await replaceChildren(
    trx,
    'practice_insurance_plans',
    'practice_id',
    (doc.practices ?? []).filter((p) => p.insurance_plan_ids).map((p) => p.id),
    (doc.practices ?? []).flatMap((p) => (p.insurance_plan_ids ?? []).map((insurance_plan_id) => ({ env, practice_id: p.id, insurance_plan_id }))),
    env,
  );
  return renamedSpecialties;
}
