/**
 * Runs the schema migrations (at start, by `npm run migrate`, and in tests). Migrations are listed
 * statically so that the bundle and the TypeScript runner see the same set.
 */
import { Migrator, sql, type DatabaseIntrospector, type Kysely, type Migration, type MigrationProvider, type TableMetadata } from 'kysely';
import * as m0001 from './migrations/0001_initial.js';
import * as m0002 from './migrations/0002_auth.js';
import * as m0003 from './migrations/0003_directory.js';
import * as m0004 from './migrations/0004_scheduling.js';
import * as m0005 from './migrations/0005_webhooks.js';
import * as m0006 from './migrations/0006_webhook_events.js';
import * as m0007 from './migrations/0007_directory_perf.js';
import * as m0008 from './migrations/0008_directory_search.js';
import * as m0009 from './migrations/0009_availability_summaries.js';
import * as m0010 from './migrations/0010_booking_context_versions.js';
import * as m0011 from './migrations/0011_idempotency_withheld_answers.js';
import * as m0012 from './migrations/0012_booking_context_insurance_versions.js';
import * as m0013 from './migrations/0013_practice_accounts.js';
import * as m0014 from './migrations/0014_practice_invitations.js';
import * as m0015 from './migrations/0015_time_off.js';
import * as m0016 from './migrations/0016_practice_calendar_indexes.js';
import * as m0017 from './migrations/0017_request_log.js';
import * as m0018 from './migrations/0018_console_accounts.js';
import * as m0019 from './migrations/0019_delivery_response_excerpt.js';
import * as m0020 from './migrations/0020_production_decisions.js';
import * as m0021 from './migrations/0021_directory_reads.js';
import * as m0022 from './migrations/0022_attachment_files.js';
import * as m0023 from './migrations/0023_practice_visit_reasons.js';
import * as m0024 from './migrations/0024_developer_directory_changes.js';
import * as m0025 from './migrations/0025_reference_data_versions.js';
import * as m0026 from './migrations/0026_time_off_truncate_version.js';
import * as m0027 from './migrations/0027_developer_npi_copy.js';
import * as m0028 from './migrations/0028_summary_statistics_target.js';
import * as m0029 from './migrations/0029_job_leases.js';

const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_auth': m0002,
  '0003_directory': m0003,
  '0004_scheduling': m0004,
  '0005_webhooks': m0005,
  '0006_webhook_events': m0006,
  '0007_directory_perf': m0007,
  '0008_directory_search': m0008,
  '0009_availability_summaries': m0009,
  '0010_booking_context_versions': m0010,
  '0011_idempotency_withheld_answers': m0011,
  '0012_booking_context_insurance_versions': m0012,
  '0013_practice_accounts': m0013,
  '0014_practice_invitations': m0014,
  '0015_time_off': m0015,
  '0016_practice_calendar_indexes': m0016,
  '0017_request_log': m0017,
  '0018_console_accounts': m0018,
  '0019_delivery_response_excerpt': m0019,
  '0020_production_decisions': m0020,
  '0021_directory_reads': m0021,
  '0022_attachment_files': m0022,
  '0023_practice_visit_reasons': m0023,
  '0024_developer_directory_changes': m0024,
  '0025_reference_data_versions': m0025,
  '0026_time_off_truncate_version': m0026,
  '0027_developer_npi_copy': m0027,
  '0028_summary_statistics_target': m0028,
  '0029_job_leases': m0029,
};

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

/**
 * Table lookups for the migrator, confined to one schema. Kysely's PostgreSQL introspector reads
 * every column of every schema and resolves each table by name (`pg_get_serial_sequence`), so a
 * schema dropped by another connection meanwhile (another test worker, another tenant) fails our
 * migration with "schema … does not exist". The migrator needs only table names.
 */
function schemaIntrospector(db: Kysely<unknown>, schema: string): DatabaseIntrospector {
  const getTables = async (): Promise<TableMetadata[]> => {
    const { rows } = await sql<{ name: string; is_view: boolean }>`
      SELECT table_name AS name, table_type = 'VIEW' AS is_view
      FROM information_schema.tables WHERE table_schema = ${schema}`.execute(db);
    return rows.map((r) => ({ name: r.name, schema, isView: r.is_view, columns: [] }));
  };
  return {
    getSchemas: async () => (await sql<{ name: string }>`SELECT nspname AS name FROM pg_catalog.pg_namespace`.execute(db)).rows,
    getTables,
    getMetadata: async () => ({ tables: await getTables() }),
  };
}

/**
 * The migrator, with its bookkeeping tables pinned to the connection's current schema. Without the
 * pin Kysely looks for `kysely_migration*` in every schema of the database, so another schema's
 * tables (a parallel test run, another app) make it skip creating ours and then fail. Its table
 * lookups go through `schemaIntrospector` (the `db` it gets differs from ours in that alone).
 */
async function migrator(db: Kysely<unknown>): Promise<Migrator> {
  const { rows } = await sql<{ schema: string | null }>`SELECT current_schema() AS schema`.execute(db);
  const schema = rows[0]?.schema ?? 'public';
  const introspection = schemaIntrospector(db, schema);
  const scoped = new Proxy(db, {
    get(target, prop) {
      if (prop === 'introspection') return introspection;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return new Migrator({ db: scoped, provider: new StaticProvider(), migrationTableSchema: schema });
}

/** Applies every pending migration; throws with the failing migration's name on error. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const { error, results } = await (await migrator(db)).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * True when every known migration has been applied (used by `/readyz`). Reads Kysely's bookkeeping
 * table directly: one small query, no catalog scan.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function migrationsCurrent(db: Kysely<any>): Promise<boolean> {
  try {
    const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db);
    const applied = new Set(rows.map((r) => r.name));
    return Object.keys(MIGRATIONS).every((name) => applied.has(name));
  } catch (e) {
    // No bookkeeping table yet: nothing has been migrated.
    if ((e as { code?: string }).code === '42P01') return false;
    throw e;
  }
}
