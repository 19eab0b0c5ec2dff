/**
 * Directory read paths (issue #4): indexes for the caller's-directory joins, ZIP/distance search,
 * insurance filters, facilities, and the insurance-mapping job queue. Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A developer's directory, walked in provider-location id order (pagination).
  await sql`CREATE INDEX IF NOT EXISTS developer_provider_locations_env_dev
    ON developer_provider_locations (env, developer_id, provider_location_id)`.execute(db);
  // Reverse lookup: which developers see a provider-location.
  await sql`CREATE INDEX IF NOT EXISTS developer_provider_locations_pl
    ON developer_provider_locations (env, provider_location_id)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS provider_locations_location ON provider_locations (env, location_id)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS provider_location_insurance_plans_plan
    ON provider_location_insurance_plans (env, insurance_plan_id, provider_location_id)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS practice_insurance_plans_plan
    ON practice_insurance_plans (env, insurance_plan_id, practice_id)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS providers_practice ON providers (env, practice_id)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS facilities_pl ON facilities (env, provider_location_id)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS visit_reasons_specialty ON visit_reasons (env, specialty_id)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS insurance_plans_carrier ON insurance_plans (env, carrier_id)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS directory_changes_pl ON directory_changes (env, provider_location_id, changed_at)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS insurance_mapping_requests_pending
    ON insurance_mapping_requests (created_at) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS insurance_mapping_requests_pl
    ON insurance_mapping_requests (env, provider_location_id, created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const i of [
    'developer_provider_locations_env_dev', 'developer_provider_locations_pl', 'provider_locations_location',
    'provider_location_insurance_plans_plan', 'practice_insurance_plans_plan', 'providers_practice', 'facilities_pl',
    'visit_reasons_specialty', 'insurance_plans_carrier', 'directory_changes_pl', 'insurance_mapping_requests_pending',
    'insurance_mapping_requests_pl',
  ]) {
    await sql`DROP INDEX IF EXISTS ${sql.id(i)}`.execute(db);
  }
}
