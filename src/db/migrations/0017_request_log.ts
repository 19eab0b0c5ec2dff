/**
 * The developer's request log (docs/api/request-log.md): one row per API call a developer's
 * credential made, kept 7 days and at most 10,000 per developer (pruned by the request-log job).
 * No request or response bodies, except the error body of a refused call; URLs without query values.
 * Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE request_log (
      id bigserial PRIMARY KEY,
      env text NOT NULL,
      developer_id text NOT NULL,
      client_id text NOT NULL,
      at timestamptz NOT NULL,
      method text NOT NULL,
      path text NOT NULL,
      status smallint NOT NULL,
      latency_ms real NOT NULL,
      request_id text NOT NULL,
      error jsonb
    )`.execute(db);
  await sql`CREATE INDEX request_log_developer_at ON request_log (developer_id, at DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX request_log_request_id ON request_log (request_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE request_log`.execute(db);
}
