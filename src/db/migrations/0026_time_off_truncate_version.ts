/**
 * `TRUNCATE time_off` moves the versions too (migration 0010's `calendar_versions_bump`, which on a
 * truncate moves the directory version, as `TRUNCATE calendar_timeslots` does): a truncate names no
 * rows, so no provider's calendar version can be moved, and the directory version labels every kept
 * booking context and kept schedule (docs/scheduling.md, "Kept schedule data"). Before this, the
 * insert, update and delete triggers of migration 0015 moved the provider's calendar version and a
 * truncate moved nothing. Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TRIGGER time_off_version_truncate AFTER TRUNCATE ON time_off
    FOR EACH STATEMENT EXECUTE FUNCTION calendar_versions_bump()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS time_off_version_truncate ON time_off`.execute(db);
}
