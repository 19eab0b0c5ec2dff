/**
 * Practice accounts (docs/decisions/0014-practice-workspace.md): staff logins of a practice with a
 * role, and the staff member as an actor in the audit log. A staff member is a `users` row with role
 * `staff` (no provider); `practice_members` ties a user to one practice of one environment.
 * Memberships do not reference `practices`: a directory import may drop and re-add a practice, and
 * its staff must survive that. Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE users DROP CONSTRAINT users_role_check`.execute(db);
  await sql`ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('patient', 'provider', 'staff'))`.execute(db);
  await sql`
    CREATE TABLE practice_members (
      env text NOT NULL,
      practice_id text NOT NULL,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('practice_admin', 'practice_staff')),
      created_at timestamptz NOT NULL DEFAULT now(),
      created_by_user_id text,
      PRIMARY KEY (user_id)
    )`.execute(db);
  await sql`CREATE INDEX practice_members_practice ON practice_members (env, practice_id)`.execute(db);
  await sql`ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_kind_check`.execute(db);
  await sql`ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_kind_check CHECK (actor_kind IN ('client', 'user', 'operator', 'service', 'staff'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_kind_check`.execute(db);
  await sql`ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_kind_check CHECK (actor_kind IN ('client', 'user', 'operator', 'service'))`.execute(db);
  await sql`DROP TABLE practice_members`.execute(db);
  await sql`ALTER TABLE users DROP CONSTRAINT users_role_check`.execute(db);
  await sql`ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('patient', 'provider'))`.execute(db);
}
