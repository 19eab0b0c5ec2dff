/**
 * Versions of what a booking is checked against (issue #8 §7: booking throughput). Imports only Kysely.
 *
 * A booking is validated against its provider-location's context (directory facts, weekly schedule,
 * calendar timeslots; `loadBookingContext`). A process may keep that context in memory and skip
 * reading it again, provided its write only succeeds while nothing the context was read from has
 * changed since. These counters say "changed", and triggers keep them, so every writer (the service,
 * an import, an operator's SQL) moves them:
 *
 * - `directory_version`: one row; +1 in every transaction that writes a directory table a booking
 *   context reads (at its first such statement) (`providers`, `locations`, `provider_locations`, `visit_reasons`,
 *   `insurance_plans`, `weekly_schedules`, and `developer_provider_locations` except inserts: a
 *   provider-location joining a directory only widens what a booking may do, and a context that
 *   refuses is read again before the refusal is answered). Directory writes are rare (imports,
 *   onboarding); the writers of one database queue on this row until they commit.
 * - `calendar_versions`: one row per `(env, provider_id)`; +1 for each provider whose calendar
 *   timeslots a statement inserted, updated or deleted. Calendar pushes of different providers do
 *   not wait for each other.
 * - `TRUNCATE` of any of those tables moves the directory version (everything is read again).
 *
 * The booking statement compares both counters with the ones its context was read with, in the same
 * statement as its inserts (`bookingStatement`): a mismatch inserts nothing and the booking reads its
 * context again.
 */
import { sql, type Kysely } from 'kysely';

/** Directory tables a booking context reads; `developer_provider_locations` is handled apart (no inserts). */
const DIRECTORY_TABLES = ['providers', 'locations', 'provider_locations', 'visit_reasons', 'insurance_plans', 'weekly_schedules'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE directory_version (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      version bigint NOT NULL
    )`.execute(db);
  await sql`INSERT INTO directory_version (id, version) VALUES (true, 1)`.execute(db);
  await sql`
    CREATE TABLE calendar_versions (
      env text NOT NULL,
      provider_id text NOT NULL,
      version bigint NOT NULL,
      PRIMARY KEY (env, provider_id)
    )`.execute(db);
  await sql`INSERT INTO calendar_versions (env, provider_id, version) SELECT DISTINCT env, provider_id, 1 FROM calendar_timeslots`.execute(db);

  await sql`
    CREATE FUNCTION directory_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- Once per transaction: its changes become visible together with the one move. An import of
      -- thousands of statements would otherwise update the one row thousands of times in one
      -- transaction, each walking the chain of the row's earlier versions.
      IF current_setting('carebook.directory_version_moved', true) IS DISTINCT FROM txid_current()::text THEN
        UPDATE directory_version SET version = version + 1;
        PERFORM set_config('carebook.directory_version_moved', txid_current()::text, true);
      END IF;
      RETURN NULL;
    END $$`.execute(db);
  for (const table of DIRECTORY_TABLES) {
    await sql`
      CREATE TRIGGER ${sql.id(`${table}_directory_version`)}
      AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.id(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION directory_version_bump()`.execute(db);
  }
  await sql`
    CREATE TRIGGER developer_provider_locations_directory_version
    AFTER UPDATE OR DELETE OR TRUNCATE ON developer_provider_locations
    FOR EACH STATEMENT EXECUTE FUNCTION directory_version_bump()`.execute(db);

  // One function for the three row-carrying events: each trigger names only the transition tables
  // its event has, and PL/pgSQL plans only the branch it runs.
  await sql`
    CREATE FUNCTION calendar_versions_bump() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO calendar_versions AS v (env, provider_id, version)
        SELECT DISTINCT env, provider_id, 1 FROM changed_new ORDER BY 1, 2
        ON CONFLICT (env, provider_id) DO UPDATE SET version = v.version + 1;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO calendar_versions AS v (env, provider_id, version)
        SELECT DISTINCT env, provider_id, 1 FROM changed_old ORDER BY 1, 2
        ON CONFLICT (env, provider_id) DO UPDATE SET version = v.version + 1;
      ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO calendar_versions AS v (env, provider_id, version)
        SELECT env, provider_id, 1 FROM (SELECT env, provider_id FROM changed_old UNION SELECT env, provider_id FROM changed_new) c ORDER BY 1, 2
        ON CONFLICT (env, provider_id) DO UPDATE SET version = v.version + 1;
      ELSE
        UPDATE directory_version SET version = version + 1;
      END IF;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER calendar_timeslots_version_insert AFTER INSERT ON calendar_timeslots
    REFERENCING NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION calendar_versions_bump()`.execute(db);
  await sql`
    CREATE TRIGGER calendar_timeslots_version_delete AFTER DELETE ON calendar_timeslots
    REFERENCING OLD TABLE AS changed_old FOR EACH STATEMENT EXECUTE FUNCTION calendar_versions_bump()`.execute(db);
  await sql`
    CREATE TRIGGER calendar_timeslots_version_update AFTER UPDATE ON calendar_timeslots
    REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION calendar_versions_bump()`.execute(db);
  await sql`
    CREATE TRIGGER calendar_timeslots_version_truncate AFTER TRUNCATE ON calendar_timeslots
    FOR EACH STATEMENT EXECUTE FUNCTION calendar_versions_bump()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['insert', 'delete', 'update', 'truncate']) {
    await sql`DROP TRIGGER IF EXISTS ${sql.id(`calendar_timeslots_version_${t}`)} ON calendar_timeslots`.execute(db);
  }
  await sql`DROP FUNCTION IF EXISTS calendar_versions_bump()`.execute(db);
  for (const table of [...DIRECTORY_TABLES, 'developer_provider_locations']) {
    await sql`DROP TRIGGER IF EXISTS ${sql.id(`${table}_directory_version`)} ON ${sql.id(table)}`.execute(db);
  }
  await sql`DROP FUNCTION IF EXISTS directory_version_bump()`.execute(db);
  await sql`DROP TABLE IF EXISTS calendar_versions`.execute(db);
  await sql`DROP TABLE IF EXISTS directory_version`.execute(db);
}
