/**
 * Per-credential rate limits (docs/api/conventions.md#rate-limits): a fixed one-minute window per credential (per client
 * address for calls without a valid token), `RATE_LIMIT_PER_MINUTE` by default and overridable per
 * developer by the operator. Counters live in memory, or in Redis when `REDIS_URL` is set so that
 * every process shares them (with an in-memory fallback while Redis is unreachable).
 *
 * Answers carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds); a refused
 * call is 429 with `Retry-After` and the error body.
 */
import type { FastifyReply } from 'fastify';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Db } from '../db/database.js';
import { rateLimited } from '../domain/errors.js';

export interface RateLimiter {
  /** Counts one call for `key` against `limit` per minute; sets the headers; throws 429 when over. */
  take(reply: FastifyReply, key: string, limit: number): Promise<void>;
  /** The limit of a developer: the operator's override or the default (read again after two seconds). */
  limitFor(developerId: string | undefined): Promise<number>;
  close(): Promise<void>;
}

const WINDOW_SECONDS = 60;
/**
 * How long a process keeps a developer's limit before reading it again: an operator's override
 * takes effect on every process within this time (issue #16 §12).
 */
const OVERRIDE_CACHE_MS = 2_000;
/** The counter's own ceiling; every configurable limit is below it (the admin API caps overrides at 10,000,000). */
const COUNTER_CEILING = 10_000_001;

export function createRateLimiter(opts: { db: Db; defaultPerMinute: number; redisUrl?: string | undefined }): RateLimiter {
  const redis = opts.redisUrl ? new Redis(opts.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false }) : undefined;
  redis?.on('error', () => undefined); // reported through the insurance limiter taking over
  const overrides = new Map<string, { limit: number; at: number }>();
  // One counter per key, whatever the key's limit: the limit is compared with the count here, so a
  // limit changed mid-window applies to the calls already counted in it.
  const memory = new RateLimiterMemory({ points: COUNTER_CEILING, duration: WINDOW_SECONDS, keyPrefix: 'rl' });
  const counter: RateLimiterAbstract = redis
    ? new RateLimiterRedis({ storeClient: redis, points: COUNTER_CEILING, duration: WINDOW_SECONDS, keyPrefix: 'carebook:rl', insuranceLimiter: memory })
    : memory;

  const headers = (reply: FastifyReply, limit: number, res: RateLimiterRes): void => {
    reply.header('ratelimit-limit', String(limit));
    reply.header('ratelimit-remaining', String(Math.max(0, limit - res.consumedPoints)));
    reply.header('ratelimit-reset', String(Math.max(1, Math.ceil(res.msBeforeNext / 1000))));
  };

  return {
    async take(reply, key, limit) {
      let res: RateLimiterRes;
      try {
        res = await counter.consume(key, 1);
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        res = e;
      }
      headers(reply, limit, res);
      if (res.consumedPoints > limit) {
        const retry = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
        throw rateLimited(`rate limit of ${limit} requests per minute exceeded; retry after ${retry} s`, retry);
      }
    },
    async limitFor(developerId) {
      if (!developerId) return opts.defaultPerMinute;
      const cached = overrides.get(developerId);
      if (cached && Date.now() - cached.at < OVERRIDE_CACHE_MS) return cached.limit;
      const row = await opts.db.selectFrom('developers').select('rate_limit_per_minute').where('id', '=', developerId).executeTakeFirst();
      const limit = row?.rate_limit_per_minute ?? opts.defaultPerMinute;
      overrides.set(developerId, { limit, at: Date.now() });
      return limit;
    },
    async close() {
      redis?.disconnect();
    },
  };
}
