/**
 * Per provider-location visit reasons set by the practice, and the practice audit log
 * (docs/decisions/0019-practice-visit-reasons.md). Imports only Kysely.
 *
 * - `provider_location_visit_reasons`: a practice's override of one visit reason at one
 *   provider-location: whether it is offered there, and a duration per patient type (null: the
 *   directory's `visit_reasons` duration). No row: the directory's values. Like `time_off`, the rows
 *   belong to the practice and reference no directory table; a directory import deletes only the
 *   rows of reasons its provider no longer accepts. Writing them moves the directory version
 *   (migration 0010), so kept booking contexts are read again.
 * - `practice_audit_log`: who changed which schedule of a practice (weekly hours, time off,
 *   settings, visit reasons): ids only, never patient data. `audit_log` is per appointment.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE provider_location_visit_reasons (
      env text NOT NULL,
      provider_location_id text NOT NULL,
      visit_reason_id text NOT NULL,
      offered boolean NOT NULL DEFAULT true,
      duration_new_minutes integer CHECK (duration_new_minutes BETWEEN 5 AND 480),
      duration_existing_minutes integer CHECK (duration_existing_minutes BETWEEN 5 AND 480),
      updated_by_user_id text,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (env, provider_location_id, visit_reason_id)
    )`.execute(db);
  await sql`
    CREATE TRIGGER provider_location_visit_reasons_directory_version
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON provider_location_visit_reasons
    FOR EACH STATEMENT EXECUTE FUNCTION directory_version_bump()`.execute(db);
  await sql`
    CREATE TABLE practice_audit_log (
      id bigserial PRIMARY KEY,
      env text NOT NULL,
      practice_id text NOT NULL,
      actor_kind text NOT NULL CHECK (actor_kind IN ('staff', 'operator')),
      actor_user_id text,
      action text NOT NULL,
      provider_id text,
      provider_location_id text,
      subject_id text,
      request_id text,
      at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX practice_audit_log_practice ON practice_audit_log (env, practice_id, at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS practice_audit_log`.execute(db);
  await sql`DROP TABLE IF EXISTS provider_location_visit_reasons`.execute(db);
}
