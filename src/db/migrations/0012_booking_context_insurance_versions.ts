/**
 * A booking is now also checked against who its provider-location takes booking requests from
 * (`accepts_booking_requests_from`: in-network, out-of-network, self-pay), and whether the patient's
 * plan is in network is read from the provider-location's (or, where plans are managed at practice
 * level, the practice's) plan mappings. Those tables join the directory version of migration 0010,
 * so a booking context kept in memory is read again after any of them changes. Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

const TABLES = ['practices', 'provider_location_insurance_plans', 'practice_insurance_plans'];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) {
    await sql`
      CREATE TRIGGER ${sql.id(`${table}_directory_version`)}
      AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.id(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION directory_version_bump()`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) await sql`DROP TRIGGER IF EXISTS ${sql.id(`${table}_directory_version`)} ON ${sql.id(table)}`.execute(db);
}
