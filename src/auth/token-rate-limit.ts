/**
 * Per-address rate limit of the token endpoint (docs/api/conventions.md#rate-limits: unauthenticated calls are limited
 * per client address). Uses the API's limiter (`src/http/rate-limit.ts`) with its own bucket, so
 * token requests and unauthenticated `/v1` calls do not eat each other's budget; the refusal is
 * shaped as an OAuth error (RFC 6749 §5.2 body) with HTTP 429 and `Retry-After` (RFC 6585 §4).
 */
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { DomainError } from '../domain/errors.js';
import type { RateLimiter } from '../http/rate-limit.js';

/** The bucket of one client address at the token endpoint. */
export const tokenBucket = (ip: string): string => `oauth-token:ip:${ip}`;

/**
 * An `onRequest` hook counting each token request against `RATE_LIMIT_PER_MINUTE` for the client
 * address (`request.ip`, which honours `TRUST_PROXY`); over the limit it answers 429,
 * `Retry-After`, and `{error: "invalid_request", error_description}`.
 */
export function tokenRateLimit(limiter: RateLimiter): onRequestAsyncHookHandler {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    try {
      await limiter.take(reply, tokenBucket(req.ip), await limiter.limitFor(undefined));
    } catch (e) {
      if (!(e instanceof DomainError) || e.kind !== 'rate_limited') throw e;
      const retry = String(e.details.retryAfterSeconds ?? 60);
      return reply
        .code(429)
        .header('retry-after', retry)
        .header('cache-control', 'no-store')
        .send({ error: 'invalid_request', error_description: `rate limit exceeded; retry after ${retry} s` });
    }
  };
}
