/**
 * Keeps the request log bounded (docs/api/request-log.md): entries older than
 * {@link REQUEST_LOG_RETENTION_DAYS} days go, and beyond the newest {@link REQUEST_LOG_MAX_PER_DEVELOPER}
 * of each developer the older ones go.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export const REQUEST_LOG_RETENTION_DAYS = 7;
export const REQUEST_LOG_MAX_PER_DEVELOPER = 10_000;
/** Days of daily usage counters kept (docs/console.md, "Usage"). */
export const USAGE_RETENTION_DAYS = 90;

/** Deletes the daily usage counters of days more than `days` before today (UTC); answers how many went. */
export async function pruneUsageDaily(db: Kysely<Database>, days = USAGE_RETENTION_DAYS): Promise<number> {
  const res = await db
    .deleteFrom('usage_daily')
    .where('day', '<', sql<string>`((now() AT TIME ZONE 'UTC')::date - ${days}::int)`)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Deletes expired entries and each developer's entries past the newest `max`; answers how many went. */
export async function pruneRequestLog(db: Kysely<Database>, opts: { retentionDays?: number; maxPerDeveloper?: number } = {}): Promise<number> {
  const days = opts.retentionDays ?? REQUEST_LOG_RETENTION_DAYS;
  const max = opts.maxPerDeveloper ?? REQUEST_LOG_MAX_PER_DEVELOPER;
  const expired = await db
    .deleteFrom('request_log')
    .where('at', '<', sql<Date>`now() - make_interval(days => ${days})`)
    .executeTakeFirst();
  // Only developers over the bound are looked at: the oldest entry each keeps is found through the
  // (developer_id, at DESC, id DESC) index, and everything older goes.
  const over = await sql<{ n: string }>`
    WITH over AS (
      SELECT developer_id FROM request_log GROUP BY developer_id HAVING count(*) > ${max}
    ), edge AS (
      SELECT o.developer_id, e.at, e.id FROM over o
      CROSS JOIN LATERAL (
        SELECT at, id FROM request_log r WHERE r.developer_id = o.developer_id
        ORDER BY at DESC, id DESC OFFSET ${max - 1} LIMIT 1
      ) e
    ), gone AS (
      DELETE FROM request_log r USING edge
      WHERE r.developer_id = edge.developer_id AND (r.at, r.id) < (edge.at, edge.id)
      RETURNING 1
    )
    SELECT count(*)::text AS n FROM gone`.execute(db);
  return Number(expired.numDeletedRows) + Number(over.rows[0]?.n ?? 0);
}
