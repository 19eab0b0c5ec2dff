/**
 * Directory search and listing at 50,000 provider-locations (issue #4 §5). Imports only Kysely.
 *
 * - `provider_location_search`: one row per active provider-location per search term, the term being
 *   `sp:<specialty id>` for each of its provider's `specialty_ids` and `vr:<visit reason id>` for each
 *   of its `visit_reason_ids`, with what the search filters and sorts on (virtual or not, the
 *   location's state and coordinates). `GET /v1/provider_locations` reads its candidates from here:
 *   the in-person ones by a latitude/longitude box within one term, the virtual ones by state within
 *   one term, instead of every location in the box joined to its provider only to drop most of them
 *   on the specialty. It is derived data: `writeDirectory` refreshes the rows of every
 *   provider-location a write touches (its own row, its provider or its location), and this
 *   migration fills it for the directory written before it.
 * - `developer_provider_locations.active`: a copy of the provider-location's `active`, kept equal by
 *   two triggers (set on insert whoever inserts; followed when the provider-location's flag changes),
 *   so that a developer's active directory is one partial index (`developer_provider_locations_active`)
 *   that `schedulable_entities` pages and counts by an index-only scan, without a join to
 *   `provider_locations` over the whole directory.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE provider_location_search (
      env text NOT NULL,
      term text NOT NULL,
      provider_location_id text NOT NULL,
      is_virtual boolean NOT NULL,
      state text NOT NULL,
      latitude double precision,
      longitude double precision,
      PRIMARY KEY (env, provider_location_id, term),
      FOREIGN KEY (env, provider_location_id) REFERENCES provider_locations(env, id)
    )`.execute(db);
  await sql`
    INSERT INTO provider_location_search (env, term, provider_location_id, is_virtual, state, latitude, longitude)
    SELECT pl.env, t.term, pl.id, l.is_virtual OR pl.provider_location_type = 'virtual_provider', l.state, l.latitude, l.longitude
    FROM provider_locations pl
    JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
    CROSS JOIN LATERAL (
      SELECT 'sp:' || s FROM unnest(p.specialty_ids) s
      UNION
      SELECT 'vr:' || v FROM unnest(p.visit_reason_ids) v
    ) t(term)
    WHERE pl.active`.execute(db);
  // Built after the fill (one sort each instead of row-by-row insertion).
  await sql`CREATE INDEX provider_location_search_in_person
    ON provider_location_search (env, term, latitude, longitude) WHERE NOT is_virtual`.execute(db);
  await sql`CREATE INDEX provider_location_search_virtual
    ON provider_location_search (env, term, state) WHERE is_virtual`.execute(db);

  await sql`ALTER TABLE developer_provider_locations ADD COLUMN active boolean NOT NULL DEFAULT true`.execute(db);
  await sql`
    UPDATE developer_provider_locations dpl SET active = false
    FROM provider_locations pl
    WHERE pl.env = dpl.env AND pl.id = dpl.provider_location_id AND NOT pl.active`.execute(db);
  await sql`CREATE INDEX developer_provider_locations_active
    ON developer_provider_locations (env, developer_id, provider_location_id) INCLUDE (added_at) WHERE active`.execute(db);
  // Whoever inserts a developer's provider-location (an import, the sandbox fixtures, a new
  // developer), the copy starts equal to the provider-location's flag.
  await sql`
    CREATE FUNCTION developer_provider_locations_set_active() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      SELECT pl.active INTO NEW.active FROM provider_locations pl
      WHERE pl.env = NEW.env AND pl.id = NEW.provider_location_id;
      NEW.active := coalesce(NEW.active, true);
      RETURN NEW;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER developer_provider_locations_set_active
    BEFORE INSERT ON developer_provider_locations
    FOR EACH ROW EXECUTE FUNCTION developer_provider_locations_set_active()`.execute(db);
  await sql`
    CREATE FUNCTION provider_locations_follow_active() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE developer_provider_locations SET active = NEW.active
      WHERE env = NEW.env AND provider_location_id = NEW.id;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER provider_locations_follow_active
    AFTER UPDATE OF active ON provider_locations
    FOR EACH ROW WHEN (OLD.active IS DISTINCT FROM NEW.active)
    EXECUTE FUNCTION provider_locations_follow_active()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS provider_locations_follow_active ON provider_locations`.execute(db);
  await sql`DROP FUNCTION IF EXISTS provider_locations_follow_active()`.execute(db);
  await sql`DROP TRIGGER IF EXISTS developer_provider_locations_set_active ON developer_provider_locations`.execute(db);
  await sql`DROP FUNCTION IF EXISTS developer_provider_locations_set_active()`.execute(db);
  await sql`DROP INDEX IF EXISTS developer_provider_locations_active`.execute(db);
  await sql`ALTER TABLE developer_provider_locations DROP COLUMN IF EXISTS active`.execute(db);
  await sql`DROP TABLE IF EXISTS provider_location_search`.execute(db);
}
