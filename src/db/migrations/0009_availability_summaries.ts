/**
 * Stored availability summaries (issue #4 §5: a cold `GET /v1/schedulable_entities?page_size=10000`
 * under 300 ms). Imports only Kysely.
 *
 * - `availability_summaries`: one row per provider-location with the summary that directory listings
 *   show (docs/api/directory.md#schedulable-entities `new_patient_availability` /
 *   `existing_patient_availability`, docs/api/directory.md#providers-by-npi
 *   `first_availability_date_in_provider_local_time`) and the instant it was computed for
 *   (`computed_at`, the computation's "now"). Derived data: a background loop recomputes the rows of
 *   active provider-locations before they are older than the listings may show (60 s); listings
 *   serve a row only while it is younger than that, so a missing or old row costs a computation on
 *   the request, never a wrong answer. The summary is in plain columns (measured cheaper to read
 *   10,000 of than one json, jsonb or text value: no JSON parse); instants are ISO-8601 text exactly
 *   as served, the local date a `date` (read as text). Rows go with their provider-location
 *   (ON DELETE CASCADE).
 * - `availability_summaries_age`: `(env, computed_at)`, so the refresher finds the oldest rows of an
 *   environment by an index range instead of a scan of the table.
 *
 * Nothing is filled here: the refresher writes the rows on its first pass after the upgrade.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE availability_summaries (
      env text NOT NULL,
      provider_location_id text NOT NULL,
      computed_at timestamptz NOT NULL,
      new_next_available_utc text,
      new_next_28_days text NOT NULL CHECK (new_next_28_days IN ('none', 'limited', 'available')),
      existing_next_available_utc text,
      existing_next_28_days text NOT NULL CHECK (existing_next_28_days IN ('none', 'limited', 'available')),
      first_availability_date date,
      default_visit_reason_id text,
      PRIMARY KEY (env, provider_location_id),
      FOREIGN KEY (env, provider_location_id) REFERENCES provider_locations(env, id) ON DELETE CASCADE
    )`.execute(db);
  await sql`CREATE INDEX availability_summaries_age ON availability_summaries (env, computed_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS availability_summaries`.execute(db);
}
