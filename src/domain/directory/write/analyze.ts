/** Fresh planner statistics after a directory write. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';

/**
 * Refreshes the planner's statistics of the directory tables after a write. Without them a
 * just-written directory is planned as if every table held one row: on the demo directory (~270
 * provider-locations) a provider read took 3 s of nested loops instead of under a millisecond, until
 * autovacuum analysed the tables minutes later. Run it after the write's transaction commits.
 */
export async function analyzeDirectory(db: Kysely<Database>): Promise<void> {
  await sql`ANALYZE providers, locations, provider_locations, developer_provider_locations, provider_location_search, weekly_schedules,
    provider_location_insurance_plans, practices, practice_insurance_plans, facilities, directory_changes, developer_directory_changes,
    specialties, visit_reasons, insurance_plans, calendar_versions`.execute(db);
}
