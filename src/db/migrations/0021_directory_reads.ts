/**
 * Directory single reads whose cost does not grow with the directory (issue #20 §7; docs/performance.md,
 * "Directory reads (issue #20 §7)"). Imports only Kysely. Both are derived data kept by triggers, so
 * every writer keeps them right, and both are filled here for the rows written before.
 *
 * - `developer_directory_sizes`: the number of active provider-locations in each developer's
 *   directory (`developer_provider_locations` rows with `active`), the `total_count` of
 *   `GET /v1/schedulable_entities`, read by primary key instead of counted over the whole directory
 *   on every page (~50,000 index entries per page of 100 at 50,000). Three statement-level triggers
 *   on `developer_provider_locations` (insert, update, delete: the `active` copy follows its
 *   provider-location through the triggers of migration 0008) add each statement's change per
 *   developer, in developer order, and touch no row when a statement changes no count; a truncate
 *   empties it.
 * - `facilities.latitude`, `facilities.longitude`: the coordinates of the facility's location (null
 *   for a virtual location), so that facilities near a ZIP are found by a latitude/longitude range
 *   of `facilities_geo` among facilities alone, instead of every location in the box joined to its
 *   provider-locations only to find the few with a facility (~2,800 locations for ~120 facilities
 *   within 100 miles of Manhattan at 50,000 provider-locations). A row trigger sets them when a
 *   facility is written; a statement trigger follows a location's change to its facilities.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE developer_directory_sizes (
      env text NOT NULL,
      developer_id text NOT NULL,
      active_count bigint NOT NULL,
      PRIMARY KEY (env, developer_id)
    )`.execute(db);
  await sql`
    INSERT INTO developer_directory_sizes (env, developer_id, active_count)
    SELECT env, developer_id, count(*) FILTER (WHERE active) FROM developer_provider_locations GROUP BY env, developer_id`.execute(db);
  // One function per statement kind: each reads the transition tables its trigger declares.
  const apply = (name: string, changes: string) => sql`
    CREATE FUNCTION ${sql.id(name)}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO developer_directory_sizes AS s (env, developer_id, active_count)
      SELECT env, developer_id, sum(d) FROM (${sql.raw(changes)}) c
      GROUP BY env, developer_id HAVING sum(d) <> 0
      ORDER BY env, developer_id
      ON CONFLICT (env, developer_id) DO UPDATE SET active_count = s.active_count + excluded.active_count;
      RETURN NULL;
    END $$`;
  await apply('developer_directory_sizes_insert', 'SELECT env, developer_id, 1 AS d FROM added WHERE active').execute(db);
  await apply('developer_directory_sizes_delete', 'SELECT env, developer_id, -1 AS d FROM dropped WHERE active').execute(db);
  await apply(
    'developer_directory_sizes_update',
    'SELECT env, developer_id, 1 AS d FROM added WHERE active UNION ALL SELECT env, developer_id, -1 FROM dropped WHERE active',
  ).execute(db);
  await sql`
    CREATE FUNCTION developer_directory_sizes_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM developer_directory_sizes;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER developer_directory_sizes_insert AFTER INSERT ON developer_provider_locations
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION developer_directory_sizes_insert()`.execute(db);
  await sql`CREATE TRIGGER developer_directory_sizes_delete AFTER DELETE ON developer_provider_locations
    REFERENCING OLD TABLE AS dropped FOR EACH STATEMENT EXECUTE FUNCTION developer_directory_sizes_delete()`.execute(db);
  await sql`CREATE TRIGGER developer_directory_sizes_update AFTER UPDATE ON developer_provider_locations
    REFERENCING OLD TABLE AS dropped NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION developer_directory_sizes_update()`.execute(db);
  await sql`CREATE TRIGGER developer_directory_sizes_truncate AFTER TRUNCATE ON developer_provider_locations
    FOR EACH STATEMENT EXECUTE FUNCTION developer_directory_sizes_truncate()`.execute(db);

  await sql`ALTER TABLE facilities ADD COLUMN latitude double precision, ADD COLUMN longitude double precision`.execute(db);
  await sql`
    UPDATE facilities f SET latitude = l.latitude, longitude = l.longitude
    FROM provider_locations pl JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
    WHERE pl.env = f.env AND pl.id = f.provider_location_id AND NOT l.is_virtual`.execute(db);
  await sql`CREATE INDEX facilities_geo ON facilities (env, latitude, longitude) WHERE latitude IS NOT NULL`.execute(db);
  await sql`
    CREATE FUNCTION facilities_set_coordinates() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      SELECT CASE WHEN l.is_virtual THEN NULL ELSE l.latitude END, CASE WHEN l.is_virtual THEN NULL ELSE l.longitude END
      INTO NEW.latitude, NEW.longitude
      FROM provider_locations pl JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
      WHERE pl.env = NEW.env AND pl.id = NEW.provider_location_id;
      RETURN NEW;
    END $$`.execute(db);
  await sql`CREATE TRIGGER facilities_set_coordinates BEFORE INSERT OR UPDATE OF provider_location_id ON facilities
    FOR EACH ROW EXECUTE FUNCTION facilities_set_coordinates()`.execute(db);
  await sql`
    CREATE FUNCTION locations_follow_facilities() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE facilities f
      SET latitude = CASE WHEN n.is_virtual THEN NULL ELSE n.latitude END, longitude = CASE WHEN n.is_virtual THEN NULL ELSE n.longitude END
      FROM changed n JOIN provider_locations pl ON pl.env = n.env AND pl.location_id = n.id
      WHERE f.env = pl.env AND f.provider_location_id = pl.id
        AND (f.latitude, f.longitude) IS DISTINCT FROM
            (CASE WHEN n.is_virtual THEN NULL ELSE n.latitude END, CASE WHEN n.is_virtual THEN NULL ELSE n.longitude END);
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER locations_follow_facilities AFTER UPDATE ON locations
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION locations_follow_facilities()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS locations_follow_facilities ON locations`.execute(db);
  await sql`DROP FUNCTION IF EXISTS locations_follow_facilities()`.execute(db);
  await sql`DROP TRIGGER IF EXISTS facilities_set_coordinates ON facilities`.execute(db);
  await sql`DROP FUNCTION IF EXISTS facilities_set_coordinates()`.execute(db);
  await sql`DROP INDEX IF EXISTS facilities_geo`.execute(db);
  await sql`ALTER TABLE facilities DROP COLUMN IF EXISTS latitude, DROP COLUMN IF EXISTS longitude`.execute(db);
  for (const t of ['insert', 'delete', 'update', 'truncate']) {
    await sql`DROP TRIGGER IF EXISTS ${sql.id(`developer_directory_sizes_${t}`)} ON developer_provider_locations`.execute(db);
    await sql`DROP FUNCTION IF EXISTS ${sql.id(`developer_directory_sizes_${t}`)}()`.execute(db);
  }
  await sql`DROP TABLE IF EXISTS developer_directory_sizes`.execute(db);
}
