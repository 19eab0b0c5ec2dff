/**
 * The developer console's webhook and usage records (docs/decisions/0015-developer-console.md;
 * docs/console.md, "Webhooks" and "Usage"). Imports only Kysely.
 *
 * - `webhook_deliveries.response_excerpt`: the first bytes (at most 256, whole UTF-8 characters) of
 *   the receiver's answer; never the request body. Null when nothing came back, or when the answer
 *   came from a private address that may not be reflected (`answer_withheld`).
 * - `webhook_deliveries.answer_withheld`: the receiver's address was private and its answer (status
 *   and excerpt) is not shown to the developer (docs/webhooks.md, "Where webhooks may go").
 * - `outbox_events.kind`: `appointment` (the events of appointment changes) or `test` (a test event
 *   the developer sent from the console; it names no appointment, `appointment_id` is empty).
 * - `usage_daily`: requests and errors per developer, client and UTC day, incremented by the
 *   request log's flush, kept 90 days.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE webhook_deliveries ADD COLUMN response_excerpt text CHECK (octet_length(response_excerpt) <= 256)`.execute(db);
  await sql`ALTER TABLE webhook_deliveries ADD COLUMN answer_withheld boolean NOT NULL DEFAULT false`.execute(db);
  await sql`ALTER TABLE outbox_events ADD COLUMN kind text NOT NULL DEFAULT 'appointment' CHECK (kind IN ('appointment', 'test'))`.execute(db);
  await sql`
    CREATE TABLE usage_daily (
      env text NOT NULL,
      developer_id text NOT NULL,
      client_id text NOT NULL,
      day date NOT NULL,
      requests integer NOT NULL DEFAULT 0,
      errors integer NOT NULL DEFAULT 0,
      PRIMARY KEY (developer_id, day, client_id, env)
    )`.execute(db);
  await sql`CREATE INDEX usage_daily_day ON usage_daily (day)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE usage_daily`.execute(db);
  await sql`ALTER TABLE outbox_events DROP COLUMN kind`.execute(db);
  await sql`ALTER TABLE webhook_deliveries DROP COLUMN answer_withheld`.execute(db);
  await sql`ALTER TABLE webhook_deliveries DROP COLUMN response_excerpt`.execute(db);
}
