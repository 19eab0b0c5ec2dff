/**
 * Time off (docs/decisions/0014-practice-workspace.md, "Schedules"; docs/scheduling.md): a practice
 * closes a provider (every location) or one provider-location for a range of local dates, whole
 * days or from a local time on the first date to a local time on the last. The practice owns these
 * rows: a directory import never writes them, and they do not reference the directory tables (an
 * import may drop and re-add a provider; its time off stays). Imports only Kysely.
 *
 * Schedule changes and bookings serialise on the provider's `calendar_versions` row (migration
 * 0010): a change updates it first, the booking statement reads it `FOR SHARE`. So every provider
 * now has that row from its creation on (version 0, which is what a missing row read as), and time
 * off moves it like calendar timeslots do, whoever writes the rows.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE time_off (
      id text PRIMARY KEY,
      env text NOT NULL,
      practice_id text NOT NULL,
      provider_id text NOT NULL,
      provider_location_id text,
      start_date date NOT NULL,
      end_date date NOT NULL,
      start_local time,
      end_local time,
      note text CHECK (char_length(note) <= 500),
      created_by_user_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (end_date >= start_date),
      CHECK (start_local IS NULL OR end_local IS NULL OR end_date > start_date OR end_local > start_local)
    )`.execute(db);
  await sql`CREATE INDEX time_off_provider ON time_off (env, provider_id, end_date)`.execute(db);
  await sql`CREATE INDEX time_off_practice ON time_off (env, practice_id, start_date)`.execute(db);
  await sql`
    CREATE TRIGGER time_off_version_insert AFTER INSERT ON time_off
    REFERENCING NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION calendar_versions_bump()`.execute(db);
  await sql`
    CREATE TRIGGER time_off_version_delete AFTER DELETE ON time_off
    REFERENCING OLD TABLE AS changed_old FOR EACH STATEMENT EXECUTE FUNCTION calendar_versions_bump()`.execute(db);
  await sql`
    CREATE TRIGGER time_off_version_update AFTER UPDATE ON time_off
    REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION calendar_versions_bump()`.execute(db);

  // Every provider has its calendar_versions row, so the booking statement always has a row to lock.
  await sql`INSERT INTO calendar_versions (env, provider_id, version) SELECT env, id, 0 FROM providers ON CONFLICT DO NOTHING`.execute(db);
  await sql`
    CREATE FUNCTION calendar_versions_for_new_providers() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO calendar_versions (env, provider_id, version)
      SELECT env, id, 0 FROM changed_new ORDER BY 1, 2 ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER providers_calendar_version AFTER INSERT ON providers
    REFERENCING NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION calendar_versions_for_new_providers()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS providers_calendar_version ON providers`.execute(db);
  await sql`DROP FUNCTION IF EXISTS calendar_versions_for_new_providers()`.execute(db);
  await sql`DROP TABLE IF EXISTS time_off`.execute(db);
}
