/**
 * The request log's flush (src/domain/request-log/buffer.ts) as one hand-written statement, for the
 * same reasons as the audit flush (docs/decisions/0012-fast-paths.md): one statement text for every
 * batch size, the rows travelling as one JSON array. The same statement adds the batch to the daily
 * usage counters (`usage_daily`, docs/console.md, "Usage"): requests and errors (status 400 and
 * above) per developer, client and UTC day, in one round trip and one transaction with the log.
 */
import { CompiledQuery } from 'kysely';

const FLUSH_SQL = `WITH r AS (
    SELECT * FROM json_to_recordset($1::json) AS r(env text, developer_id text, client_id text, at timestamptz, method text, path text,
      status smallint, latency_ms real, request_id text, error jsonb)
  ), logged AS (
    INSERT INTO request_log (env, developer_id, client_id, at, method, path, status, latency_ms, request_id, error)
    SELECT env, developer_id, client_id, at, method, path, status, latency_ms, request_id, error FROM r
  )
  INSERT INTO usage_daily (env, developer_id, client_id, day, requests, errors)
  SELECT env, developer_id, client_id, (at AT TIME ZONE 'UTC')::date, count(*), count(*) FILTER (WHERE status >= 400)
  FROM r GROUP BY 1, 2, 3, 4
  ON CONFLICT (developer_id, day, client_id, env) DO UPDATE
    SET requests = usage_daily.requests + EXCLUDED.requests, errors = usage_daily.errors + EXCLUDED.errors`;

/** One entry of a flush; `error` is the refused call's error body as parsed JSON, or null. */
export interface RequestLogEntry {
  env: string;
  developer_id: string;
  client_id: string;
  at: Date;
  method: string;
  path: string;
  status: number;
  latency_ms: number;
  request_id: string;
  error: unknown;
}

/** The one statement that inserts a batch of request-log entries and counts them in `usage_daily`. */
export function requestLogFlushQuery(batch: RequestLogEntry[]): CompiledQuery {
  return CompiledQuery.raw(FLUSH_SQL, [JSON.stringify(batch)]);
}
