/**
 * The developer's usage, from the developer console (docs/console.md, "Usage"): requests and errors
 * (status 400 and above) per app and UTC day, with each app's clients, from the daily counters the
 * request log's flush keeps per client (src/db/fast/request-log-flush.ts, 90 days) joined to the
 * clients' apps in the same statement; and the rate-limit headroom: the developer's limit per minute
 * (docs/api/conventions.md#rate-limits) against its calls of the last 60 seconds in the request log,
 * in all, per app and per client.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { USAGE_RETENTION_DAYS } from '../request-log/prune.js';
import { invalidInput } from '../errors.js';
import { assertDeveloper } from './webhooks.js';

/** One client's share of an app's day. */
export interface UsageClient {
  client_id: string;
  /** `machine` (the confidential credential) or `user` (the public user client); null for a client no longer known. */
  kind: 'machine' | 'user' | null;
  requests: number;
  errors: number;
  error_rate: number;
}

/** One app on one UTC day. */
export interface UsageDay {
  /** UTC date, `YYYY-MM-DD`. */
  day: string;
  /** Null for calls of clients that belong to no app (none of a developer's should): they are one row per day. */
  app_id: string | null;
  app_name: string | null;
  requests: number;
  errors: number;
  /** `errors / requests`, 0 for a day without requests; rounded to four decimals. */
  error_rate: number;
  /** The app's clients that made calls that day, by `client_id`. */
  clients: UsageClient[];
}

export interface Usage {
  days: UsageDay[];
  rate_limit: {
    /** The limit of each credential: the operator's override for the developer, else the service's default. */
    per_minute: number;
    /** The developer's calls in the last 60 seconds, as logged (the log is written a moment after each call). */
    used_last_minute: number;
    /** `per_minute - used_last_minute`, at least 0: the least any one credential has left, since each counts its own calls. */
    remaining: number;
    /** The same calls by app (`app_id` null: clients of no app). */
    by_app: { app_id: string | null; app_name: string | null; requests: number }[];
    /** The same calls by client. */
    by_client: { client_id: string; app_id: string | null; requests: number }[];
  };
}

const rate = (errors: number, requests: number): number => (requests === 0 ? 0 : Math.round((errors / requests) * 10_000) / 10_000);

interface DayRow {
  day: string;
  app_id: string | null;
  app_name: string | null;
  requests: string;
  errors: string;
  clients: { client_id: string; kind: 'machine' | 'user' | null; requests: number; errors: number }[];
}

interface RecentRow {
  client_id: string;
  app_id: string | null;
  app_name: string | null;
  n: string;
}

/**
 * Usage of the last `days` UTC days including today (1 to 90), newest day first and, within a day,
 * apps oldest first (calls of no app last), and the rate-limit headroom (docs/console.md, "Usage").
 * One statement reads the days, grouped by app with each app's clients; one reads the last minute.
 * `defaultPerMinute`: the service's default limit (`RATE_LIMIT_PER_MINUTE`). Throws `invalid` naming
 * `days`, `not_found` for an unknown developer.
 */
export async function usage(db: Db, env: Env, developerId: string, q: { days?: number | undefined; defaultPerMinute: number }): Promise<Usage> {
  const days = q.days ?? 30;
  if (!Number.isInteger(days) || days < 1 || days > USAGE_RETENTION_DAYS) throw invalidInput('days', `must be a whole number from 1 to ${USAGE_RETENTION_DAYS}`);
  await assertDeveloper(db, env, developerId);
  // A client is matched with the developer's own client of that id only, so a counter can never name
  // another developer's app.
  const [counters, recent, dev] = await Promise.all([
    sql<DayRow>`
      SELECT u.day::text AS day, a.id AS app_id, a.name AS app_name,
             sum(u.requests)::text AS requests, sum(u.errors)::text AS errors,
             json_agg(json_build_object(
               'client_id', u.client_id,
               'kind', CASE c.kind WHEN 'confidential' THEN 'machine' WHEN 'public' THEN 'user' END,
               'requests', u.requests, 'errors', u.errors) ORDER BY u.client_id) AS clients
      FROM usage_daily u
      LEFT JOIN oauth_clients c ON c.client_id = u.client_id AND c.developer_id = u.developer_id AND c.env = u.env
      LEFT JOIN apps a ON a.id = c.app_id AND a.developer_id = u.developer_id
      WHERE u.developer_id = ${developerId} AND u.env = ${env}
        AND u.day > ((now() AT TIME ZONE 'UTC')::date - ${days}::int)
      GROUP BY u.day, a.id, a.name, a.created_at
      ORDER BY u.day DESC, a.created_at ASC NULLS LAST, a.id`.execute(db),
    sql<RecentRow>`
      SELECT r.client_id, a.id AS app_id, a.name AS app_name, count(*)::text AS n
      FROM request_log r
      LEFT JOIN oauth_clients c ON c.client_id = r.client_id AND c.developer_id = r.developer_id AND c.env = r.env
      LEFT JOIN apps a ON a.id = c.app_id AND a.developer_id = r.developer_id
      WHERE r.developer_id = ${developerId} AND r.env = ${env} AND r.at > now() - interval '60 seconds'
      GROUP BY r.client_id, a.id, a.name, a.created_at
      ORDER BY a.created_at ASC NULLS LAST, a.id, r.client_id`.execute(db),
    db.selectFrom('developers').select('rate_limit_per_minute').where('id', '=', developerId).executeTakeFirstOrThrow(),
  ]);
  const perMinute = dev.rate_limit_per_minute ?? q.defaultPerMinute;
  const byClient = recent.rows.map((r) => ({ client_id: r.client_id, app_id: r.app_id, requests: Number(r.n) }));
  const byApp = new Map<string | null, { app_id: string | null; app_name: string | null; requests: number }>();
  for (const r of recent.rows) {
    const app = byApp.get(r.app_id) ?? { app_id: r.app_id, app_name: r.app_name, requests: 0 };
    app.requests += Number(r.n);
    byApp.set(r.app_id, app);
  }
  const used = byClient.reduce((n, c) => n + c.requests, 0);
  return {
    days: counters.rows.map((c) => {
      const requests = Number(c.requests);
      const errors = Number(c.errors);
      return {
        day: c.day,
        app_id: c.app_id,
        app_name: c.app_name,
        requests,
        errors,
        error_rate: rate(errors, requests),
        clients: c.clients.map((x) => ({ client_id: x.client_id, kind: x.kind, requests: x.requests, errors: x.errors, error_rate: rate(x.errors, x.requests) })),
      };
    }),
    rate_limit: { per_minute: perMinute, used_last_minute: used, remaining: Math.max(0, perMinute - used), by_app: [...byApp.values()], by_client: byClient },
  };
}
