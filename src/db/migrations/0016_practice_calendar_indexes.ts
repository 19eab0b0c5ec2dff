/**
 * Indexes of the Practice API (docs/decisions/0014-practice-workspace.md): a practice's appointments
 * by start time (its list and calendar), and the outbox in event order per environment (the live
 * events stream reads it by cursor, `(occurred_at, id)`). Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS appointments_practice_start ON appointments (env, practice_id, start_time)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS outbox_env_order ON outbox_events (env, occurred_at, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS outbox_env_order`.execute(db);
  await sql`DROP INDEX IF EXISTS appointments_practice_start`.execute(db);
}
