/**
 * The 72-hour change summary of a directory at a cost of the caller's own changes (issue #20 §7;
 * docs/performance.md, "Directory reads (issue #20 §7)"). Imports only Kysely.
 *
 * `directory_changes` is the environment's log: every developer's imports and updates land in it,
 * so the summary of one directory used to read the whole environment's window and match it
 * against the caller's whole directory (a hash join over every provider-location of the
 * directory: ~11 ms at 5,000 and ~20 ms at 50,000 on PGlite with another developer's 10,000 recent
 * changes in the window).
 *
 * `developer_directory_changes` is derived data kept by a trigger: for each row written to
 * `directory_changes`, one row per developer whose directory already held the provider-location
 * before the change (`added_at < changed_at`). A provider-location that joined the directory at or
 * after its change is found by the directory's own `added_at` instead (the summary reads both), so
 * imports, which record their provider-locations as added when they join, copy nothing. The rows
 * only name candidates: the summary reads each candidate's changes from `directory_changes` itself
 * and checks that it is still in the directory, so a stale row (a provider-location since left the
 * directory) changes nothing but a lookup.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE developer_directory_changes (
      env text NOT NULL,
      developer_id text NOT NULL REFERENCES developers(id) ON DELETE CASCADE,
      provider_location_id text NOT NULL,
      changed_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX developer_directory_changes_recent
    ON developer_directory_changes (env, developer_id, changed_at) INCLUDE (provider_location_id)`.execute(db);
  await sql`
    CREATE FUNCTION developer_directory_changes_copy() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO developer_directory_changes (env, developer_id, provider_location_id, changed_at)
      SELECT n.env, dpl.developer_id, n.provider_location_id, n.changed_at
      FROM written n
      JOIN developer_provider_locations dpl ON dpl.env = n.env AND dpl.provider_location_id = n.provider_location_id
      WHERE dpl.added_at < n.changed_at;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER developer_directory_changes_copy AFTER INSERT ON directory_changes
    REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION developer_directory_changes_copy()`.execute(db);
  await sql`
    INSERT INTO developer_directory_changes (env, developer_id, provider_location_id, changed_at)
    SELECT dc.env, dpl.developer_id, dc.provider_location_id, dc.changed_at
    FROM directory_changes dc
    JOIN developer_provider_locations dpl ON dpl.env = dc.env AND dpl.provider_location_id = dc.provider_location_id
    WHERE dpl.added_at < dc.changed_at`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS developer_directory_changes_copy ON directory_changes`.execute(db);
  await sql`DROP FUNCTION IF EXISTS developer_directory_changes_copy()`.execute(db);
  await sql`DROP TABLE IF EXISTS developer_directory_changes`.execute(db);
}
