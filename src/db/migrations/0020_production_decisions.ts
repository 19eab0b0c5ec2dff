/**
 * The operator's decisions on production requests (docs/decisions/0015-developer-console.md,
 * "Production in its own database"; docs/api/admin.md#production-requests). Imports only Kysely.
 *
 * - `production_requests.refusal_reason`: why the operator refused a request, shown to the account.
 * - `production_requests.production_console_url`: where the account signs in to its production
 *   console when the grant was written into the production deployment's own database; null when the
 *   production developer lives in this database.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE production_requests ADD COLUMN refusal_reason text CHECK (char_length(refusal_reason) <= 1000)`.execute(db);
  await sql`ALTER TABLE production_requests ADD COLUMN production_console_url text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE production_requests DROP COLUMN production_console_url, DROP COLUMN refusal_reason`.execute(db);
}
