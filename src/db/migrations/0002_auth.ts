/**
 * Auth server state for the authorization code flow (issue #3): pending authorization requests
 * behind the sign-in page, login rate-limit counters, and the anonymous session a token family was
 * linked to. Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per `GET /authorize` that passed validation: the parameters the code will be bound to,
  // kept server-side so the sign-in forms carry only an opaque handle (stored hashed) and a CSRF
  // token; the row is bound to the browser that opened it (hash of its browser cookie).
  await sql`
    CREATE TABLE authorization_requests (
      id_hash text PRIMARY KEY,
      env text NOT NULL,
      client_id text NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,
      redirect_uri text NOT NULL,
      scopes text[] NOT NULL,
      state text,
      code_challenge text NOT NULL,
      login_hint text,
      anonymous_subject text,
      browser_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      completed_at timestamptz
    )`.execute(db);
  await sql`CREATE INDEX authorization_requests_expiry ON authorization_requests (expires_at)`.execute(db);

  // Fixed-window counters (login failures per account and per address, sign-ups per address).
  await sql`
    CREATE TABLE auth_rate_limits (
      bucket text PRIMARY KEY,
      hits integer NOT NULL,
      window_ends_at timestamptz NOT NULL
    )`.execute(db);

  await sql`ALTER TABLE token_families ADD COLUMN anonymous_subject text`.execute(db);
  await sql`CREATE INDEX authorization_codes_family ON authorization_codes (family_id)`.execute(db);
  await sql`CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id)`.execute(db);
  await sql`CREATE INDEX login_sessions_expiry ON login_sessions (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS login_sessions_expiry`.execute(db);
  await sql`DROP INDEX IF EXISTS refresh_tokens_family`.execute(db);
  await sql`DROP INDEX IF EXISTS authorization_codes_family`.execute(db);
  await sql`ALTER TABLE token_families DROP COLUMN IF EXISTS anonymous_subject`.execute(db);
  await sql`DROP TABLE IF EXISTS auth_rate_limits`.execute(db);
  await sql`DROP TABLE IF EXISTS authorization_requests`.execute(db);
}
