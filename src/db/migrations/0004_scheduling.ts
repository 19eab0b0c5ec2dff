/**
 * Scheduling and booking (issue #8). Imports only Kysely.
 *
 * - The no-overlap exclusion constraint now ignores holds of the same appointment, so a reschedule
 *   may hold a new time that overlaps its own current time (e.g. moved 15 minutes later) while two
 *   different appointments of one provider still never overlap.
 * - Indexes for the evaluator, the idempotency sweep, listing filters and availability reads.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE appointment_holds DROP CONSTRAINT appointment_holds_no_overlap`.execute(db);
  await sql`ALTER TABLE appointment_holds ADD CONSTRAINT appointment_holds_no_overlap
    EXCLUDE USING gist (env WITH =, provider_id WITH =, during WITH &&, appointment_id WITH <>)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS idempotency_keys_expires ON idempotency_keys (expires_at)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS appointments_dev_patient ON appointments (developer_id, developer_patient_id)
    WHERE developer_patient_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS appointments_pl_start ON appointments (env, provider_location_id, start_time)`.execute(db);
  await sql`CREATE INDEX IF NOT EXISTS outbox_appointment ON outbox_events (appointment_id, occurred_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const i of ['idempotency_keys_expires', 'appointments_dev_patient', 'appointments_pl_start', 'outbox_appointment']) {
    await sql`DROP INDEX IF EXISTS ${sql.id(i)}`.execute(db);
  }
  await sql`ALTER TABLE appointment_holds DROP CONSTRAINT appointment_holds_no_overlap`.execute(db);
  await sql`ALTER TABLE appointment_holds ADD CONSTRAINT appointment_holds_no_overlap
    EXCLUDE USING gist (env WITH =, provider_id WITH =, during WITH &&)`.execute(db);
}
