/**
 * Runs the schema migrations (at start, by `npm run migrate`, and in tests). Migrations are listed
 * statically so that the bundle and the TypeScript runner see the same set.
 */
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import * as m0001 from './migrations/0001_initial.js';
import * as m0002 from './migrations/0002_auth.js';
import * as m0003 from './migrations/0003_directory.js';
import * as m0004 from './migrations/0004_scheduling.js';
import * as m0005 from './migrations/0005_webhooks.js';

const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_auth': m0002,
  '0003_directory': m0003,
  '0004_scheduling': m0004,
  '0005_webhooks': m0005,
};

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

/**
 * The migrator, with its bookkeeping tables pinned to the connection's current schema. Without the
 * pin Kysely looks for `kysely_migration*` in every schema of the database, so another schema's
 * tables (a parallel test run, another app) make it skip creating ours and then fail.
 */
async function migrator(db: Kysely<unknown>): Promise<Migrator> {
  const { rows } = await sql<{ schema: string | null }>`SELECT current_schema() AS schema`.execute(db);
  const schema = rows[0]?.schema ?? undefined;
  return new Migrator({ db, provider: new StaticProvider(), ...(schema ? { migrationTableSchema: schema } : {}) });
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

/** True when every known migration has been applied (used by `/readyz`). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function migrationsCurrent(db: Kysely<any>): Promise<boolean> {
  const all = await (await migrator(db)).getMigrations();
  return all.every((m) => m.executedAt !== undefined);
}
