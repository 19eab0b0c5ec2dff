/**
 * Makes a developer's directory one in service for the directory benches (bench/directory-reads.ts,
 * bench/page100-probe.ts): its additions and changes moved past the 72-hour window of the change
 * summary (docs/api/directory.md#schedulable-entities), then the tables analysed.
 */
import { sql } from 'kysely';
import type { Db } from '../src/db/database.js';
import type { Env } from '../src/db/schema.js';

/**
 * Moves `developerId`'s additions and changes in `env` 100 hours back (only its rows and their
 * provider-locations), then vacuums and analyses as autovacuum would have in service (index-only
 * scans need the visibility map).
 */
export async function backdate(db: Db, env: Env, developerId: string): Promise<void> {
  const past = new Date(Date.now() - 100 * 3600_000);
  const mine = sql`(SELECT provider_location_id FROM developer_provider_locations WHERE developer_id = ${developerId})`;
  await sql`UPDATE developer_provider_locations SET added_at = ${past} WHERE developer_id = ${developerId}`.execute(db);
  await sql`UPDATE directory_changes SET changed_at = ${past} WHERE env = ${env} AND changed_at > ${past} AND provider_location_id IN ${mine}`.execute(db);
  await sql`UPDATE developer_directory_changes SET changed_at = ${past} WHERE env = ${env} AND developer_id = ${developerId} AND changed_at > ${past}`.execute(db);
  await sql`UPDATE provider_locations SET go_live_at = least(go_live_at, ${past}), profile_updated_at = least(profile_updated_at, ${past})
    WHERE env = ${env} AND id IN ${mine}`.execute(db);
  for (const table of ['developer_provider_locations', 'directory_changes', 'developer_directory_changes', 'provider_locations']) {
    await sql`VACUUM ANALYZE ${sql.table(table)}`.execute(db).catch(() => sql`ANALYZE ${sql.table(table)}`.execute(db));
  }
}
