/**
 * Directory read paths at 50,000 provider-locations (issue #4 §5). Imports only Kysely.
 * - `developer_provider_locations_page`: a developer's directory in provider-location id order with
 *   `added_at`, read by an index-only scan when `schedulable_entities` pages and counts (it replaces
 *   `developer_provider_locations_env_dev`, its prefix).
 * - `developer_provider_locations_recent`: a developer's provider-locations added in the last 72
 *   hours (`recent_change_summary`) by an index range instead of a scan of the whole directory.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS developer_provider_locations_page
    ON developer_provider_locations (env, developer_id, provider_location_id) INCLUDE (added_at)`.execute(db);
  await sql`DROP INDEX IF EXISTS developer_provider_locations_env_dev`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS developer_provider_locations_recent
    ON developer_provider_locations (env, developer_id, added_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS developer_provider_locations_recent`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS developer_provider_locations_env_dev
    ON developer_provider_locations (env, developer_id, provider_location_id)`.execute(db);
  await sql`DROP INDEX IF EXISTS developer_provider_locations_page`.execute(db);
}
