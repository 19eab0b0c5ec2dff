/**
 * `job_leases`: which process runs a background pass that must not run twice at once (the summary
 * refresh of an environment, table maintenance), until when (src/db/leases.ts). It replaces the
 * session-level advisory locks those passes held, which pinned one pooled connection for a whole
 * pass (seconds on a large directory) and had to be made per-schema by hashing: a row of this table
 * belongs to its schema, and a pass takes a connection only for each statement. Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE job_leases (
      name text PRIMARY KEY,
      holder text NOT NULL,
      expires_at timestamptz NOT NULL
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE job_leases`.execute(db);
}
