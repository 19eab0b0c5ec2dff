/**
 * Webhook delivery (issue #5). Imports only Kysely.
 * - `retry_from`: where the 48-hour retry window of an event starts (its occurrence, or its replay).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE outbox_events ADD COLUMN retry_from timestamptz`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_attempted ON webhook_deliveries (attempted_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS webhook_deliveries_attempted`.execute(db);
  await sql`ALTER TABLE outbox_events DROP COLUMN retry_from`.execute(db);
}
