/**
 * Specialties and insurance carriers move the directory version (migration 0010) too, so reference
 * listings can be kept by it (issue #20 §6; docs/performance.md, "Reference listings kept by
 * directory version"): a specialty's name and default visit reason, and a carrier's name, are in
 * the specialties and insurance plans listings. Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

const TABLES = ['specialties', 'insurance_carriers'];

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
