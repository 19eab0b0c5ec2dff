/**
 * Console accounts (docs/decisions/0015-developer-console.md, "Accounts", "Apps"): a developer's
 * console login is a `users` row with role `developer`, tied to the developer accounts it owns by
 * `developer_members`; a developer's clients are grouped in named `apps` (every existing developer
 * gets one default app named after it, holding its clients); a machine credential may keep its
 * previous secret until a grace period ends (overlapping rotation), may be revoked, and may have a
 * secret nobody has seen yet (`secret_reveal_pending`: the first console read replaces and shows
 * it); and `production_requests` records a console account's request for production access and the
 * operator's decision. Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE users DROP CONSTRAINT users_role_check`.execute(db);
  await sql`ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('patient', 'provider', 'staff', 'developer'))`.execute(db);
  await sql`
    CREATE TABLE developer_members (
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      developer_id text NOT NULL REFERENCES developers(id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner')),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (user_id, developer_id)
    )`.execute(db);
  await sql`CREATE INDEX developer_members_developer ON developer_members (developer_id)`.execute(db);
  await sql`
    CREATE TABLE apps (
      id text PRIMARY KEY,
      env text NOT NULL,
      developer_id text NOT NULL REFERENCES developers(id) ON DELETE CASCADE,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX apps_developer ON apps (developer_id, created_at)`.execute(db);
  await sql`
    ALTER TABLE oauth_clients
      ADD COLUMN app_id text REFERENCES apps(id) ON DELETE CASCADE,
      ADD COLUMN previous_secret_hash text,
      ADD COLUMN previous_secret_expires_at timestamptz,
      ADD COLUMN revoked_at timestamptz,
      ADD COLUMN secret_reveal_pending boolean NOT NULL DEFAULT false`.execute(db);
  await sql`CREATE INDEX oauth_clients_app ON oauth_clients (app_id)`.execute(db);
  // One default app per existing developer (system developers own first-party clients, not apps).
  await sql`
    INSERT INTO apps (id, env, developer_id, name, created_at)
    SELECT 'ap_' || substr(md5(d.id), 1, 16), d.env, d.id, d.name, d.created_at
    FROM developers d WHERE d.id NOT LIKE 'dv\\_system\\_%'`.execute(db);
  await sql`UPDATE oauth_clients c SET app_id = a.id FROM apps a WHERE a.developer_id = c.developer_id`.execute(db);
  await sql`
    CREATE TABLE production_requests (
      id text PRIMARY KEY,
      env text NOT NULL,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      sandbox_developer_id text NOT NULL,
      company text NOT NULL,
      use_case text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'granted', 'refused')),
      created_at timestamptz NOT NULL DEFAULT now(),
      decided_at timestamptz,
      production_developer_id text
    )`.execute(db);
  // At most one open request per account.
  await sql`CREATE UNIQUE INDEX production_requests_one_pending ON production_requests (user_id) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX production_requests_status ON production_requests (env, status, created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE production_requests`.execute(db);
  await sql`
    ALTER TABLE oauth_clients
      DROP COLUMN app_id, DROP COLUMN previous_secret_hash, DROP COLUMN previous_secret_expires_at,
      DROP COLUMN revoked_at, DROP COLUMN secret_reveal_pending`.execute(db);
  await sql`DROP TABLE apps`.execute(db);
  await sql`DROP TABLE developer_members`.execute(db);
  await sql`DELETE FROM users WHERE role = 'developer'`.execute(db);
  await sql`ALTER TABLE users DROP CONSTRAINT users_role_check`.execute(db);
  await sql`ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('patient', 'provider', 'staff'))`.execute(db);
}
