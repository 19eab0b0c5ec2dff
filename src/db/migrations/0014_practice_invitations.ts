/**
 * Invitations to a practice (docs/decisions/0014-practice-workspace.md, "Accounts"): a one-time link
 * whose token is stored only as its SHA-256, valid 7 days, used at most once (`accepted_at`).
 * Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE practice_invitations (
      token_hash text PRIMARY KEY,
      env text NOT NULL,
      practice_id text NOT NULL,
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('practice_admin', 'practice_staff')),
      created_at timestamptz NOT NULL DEFAULT now(),
      created_by_user_id text,
      expires_at timestamptz NOT NULL,
      accepted_at timestamptz,
      user_id text REFERENCES users(id) ON DELETE CASCADE
    )`.execute(db);
  await sql`CREATE INDEX practice_invitations_practice ON practice_invitations (env, practice_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE practice_invitations`.execute(db);
}
