/**
 * `developer_provider_locations.npi`: a copy of the NPI of the provider-location's provider, kept by
 * triggers like migration 0008's `active`, with a partial index on `(env, developer_id, npi) WHERE
 * active`. The NPI list (`GET /v1/reference/npi`) is then one index-only range of the caller's own
 * rows: before, it joined the caller's rows with `provider_locations` and `providers`, and for a
 * directory of ~5,000 in an environment of ~55,000 provider-locations the planner hashed the whole
 * `provider_locations` table, so one developer's list slowed 4.6× when another developer imported
 * ~50,000 (docs/performance.md, "Directory reads (issue #20 §7)").
 *
 * Kept by: the BEFORE INSERT trigger of migration 0008, which now also copies the provider's NPI, and
 * `providers_follow_npi`, AFTER UPDATE OF npi on `providers` (an import can change a provider's NPI;
 * a provider-location's provider never changes, its id is made of it). Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE developer_provider_locations ADD COLUMN npi text`.execute(db);
  await sql`
    UPDATE developer_provider_locations dpl SET npi = p.npi
    FROM provider_locations pl JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    WHERE pl.env = dpl.env AND pl.id = dpl.provider_location_id`.execute(db);
  await sql`CREATE INDEX developer_provider_locations_npi
    ON developer_provider_locations (env, developer_id, npi) WHERE active`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION developer_provider_locations_set_active() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      SELECT pl.active, p.npi INTO NEW.active, NEW.npi
      FROM provider_locations pl JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
      WHERE pl.env = NEW.env AND pl.id = NEW.provider_location_id;
      NEW.active := coalesce(NEW.active, true);
      RETURN NEW;
    END $$`.execute(db);
  await sql`
    CREATE FUNCTION providers_follow_npi() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE developer_provider_locations dpl SET npi = NEW.npi
      FROM provider_locations pl
      WHERE pl.env = NEW.env AND pl.provider_id = NEW.id
        AND dpl.env = pl.env AND dpl.provider_location_id = pl.id;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER providers_follow_npi
    AFTER UPDATE OF npi ON providers
    FOR EACH ROW WHEN (OLD.npi IS DISTINCT FROM NEW.npi)
    EXECUTE FUNCTION providers_follow_npi()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS providers_follow_npi ON providers`.execute(db);
  await sql`DROP FUNCTION IF EXISTS providers_follow_npi()`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION developer_provider_locations_set_active() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      SELECT pl.active INTO NEW.active FROM provider_locations pl
      WHERE pl.env = NEW.env AND pl.id = NEW.provider_location_id;
      NEW.active := coalesce(NEW.active, true);
      RETURN NEW;
    END $$`.execute(db);
  await sql`DROP INDEX IF EXISTS developer_provider_locations_npi`.execute(db);
  await sql`ALTER TABLE developer_provider_locations DROP COLUMN IF EXISTS npi`.execute(db);
}
