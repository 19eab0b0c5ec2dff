/**
 * The developer's usage, from the developer console (docs/console.md, "Usage"): requests and errors
 * (status 400 and above) per client and UTC day from the daily counters the request log's flush keeps
 * (src/db/fast/request-log-flush.ts, 90 days), and the rate-limit headroom: the developer's limit per
 * minute (docs/api/conventions.md#rate-limits) against its calls of the last 60 seconds in the request
 * log.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { USAGE_RETENTION_DAYS } from '../request-log/prune.js';
import { invalidInput } from '../errors.js';
import { assertDeveloper } from './webhooks.js';

export interface UsageDay {
  /** UTC date, `YYYY-MM-DD`. */
  day: string;
  client_id: string;
  requests: number;
  errors: number;
  /** `errors / requests`, 0 for a day without requests; rounded to four decimals. */
  error_rate: number;
}

export interface Usage {
  days: UsageDay[];
  rate_limit: {
    /** The developer's limit: the operator's override, else the service's default. */
    per_minute: number;
    /** The developer's calls in the last 60 seconds, as logged (the log is written a moment after each call). */
    used_last_minute: number;
    remaining: number;
    /** The same calls by client. */
    by_client: { client_id: string; requests: number }[];
  };
}

/**
 * Usage of the last `days` UTC days including today (1 to 90), newest day first, and the rate-limit
 * headroom (docs/console.md, "Usage"). `defaultPerMinute`: the service's default limit
 * (`RATE_LIMIT_PER_MINUTE`). Throws `invalid` naming `days`, `not_found` for an unknown developer.
 */
export async function usage(db: Db, env: Env, developerId: string, q: { days?: number | undefined; defaultPerMinute: number }): Promise<Usage> {
  const days = q.days ?? 30;
  if (!Number.isInteger(days) || days < 1 || days > USAGE_RETENTION_DAYS) throw invalidInput('days', `must be a whole number from 1 to ${USAGE_RETENTION_DAYS}`);
  await assertDeveloper(db, env, developerId);
  const [counters, recent, dev] = await Promise.all([
    db
      .selectFrom('usage_daily')
      .select([sql<string>`day::text`.as('day'), 'client_id', 'requests', 'errors'])
      .where('developer_id', '=', developerId)
      .where('env', '=', env)
      .where('day', '>', sql<string>`((now() AT TIME ZONE 'UTC')::date - ${days}::int)`)
      .orderBy('day', 'desc')
      .orderBy('client_id')
      .execute(),
    db
      .selectFrom('request_log')
      .select(['client_id', sql<string>`count(*)::text`.as('n')])
      .where('developer_id', '=', developerId)
      .where('env', '=', env)
      .where('at', '>', sql<Date>`now() - interval '60 seconds'`)
      .groupBy('client_id')
      .orderBy('client_id')
      .execute(),
    db.selectFrom('developers').select('rate_limit_per_minute').where('id', '=', developerId).executeTakeFirstOrThrow(),
  ]);
  const perMinute = dev.rate_limit_per_minute ?? q.defaultPerMinute;
  const byClient = recent.map((r) => ({ client_id: r.client_id, requests: Number(r.n) }));
  const used = byClient.reduce((n, c) => n + c.requests, 0);
  return {
    days: counters.map((c) => ({
      day: c.day,
      client_id: c.client_id,
      requests: c.requests,
      errors: c.errors,
      error_rate: c.requests === 0 ? 0 : Math.round((c.errors / c.requests) * 10_000) / 10_000,
    })),
    rate_limit: { per_minute: perMinute, used_last_minute: used, remaining: Math.max(0, perMinute - used), by_client: byClient },
  };
}
