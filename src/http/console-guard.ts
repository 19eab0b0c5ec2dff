/**
 * The bearer-token guard of the Console API (docs/decisions/0015-developer-console.md, "Accounts"):
 * an `onRequest` hook for every `/console/v1` route. No token is 401 with a bare challenge, a token
 * that is not a live console token (another role, another client, revoked, or the account gone) is
 * 401 `invalid_token` (RFC 6750 §3), both with `WWW-Authenticate`; a good one sets
 * `req.consoleUser` and is counted against the account's rate limit (the `/v1` window,
 * `RATE_LIMIT_PER_MINUTE`), as the practice guard does for staff.
 */
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { ConsoleTokenVerifier } from '../auth/console-token.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import type { ConsoleUser } from '../domain/console/accounts.js';
import { authenticationRequired, unauthorized } from '../domain/errors.js';
import { bearerToken } from './auth-guard.js';
import './console-request.js';
import type { RateLimiter } from './rate-limit.js';

/** Builds the Console API's `onRequest` hook over `verifier`, counting calls with `limiter`. */
export function makeConsoleGuard(verifier: ConsoleTokenVerifier, limiter?: RateLimiter): onRequestAsyncHookHandler {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const token = bearerToken(req);
    if (!token) {
      await limiter?.take(reply, `ip:${req.ip}`, await limiter.limitFor(undefined));
      if (!/^\s*bearer\b/i.test(req.headers.authorization ?? '')) throw authenticationRequired('sign in to the developer console: missing bearer token');
      throw unauthorized('malformed bearer token');
    }
    let user: ConsoleUser;
    try {
      user = await verifier.verify(token);
    } catch (e) {
      // A database outage while reading the account is a 503, not a bad token.
      if (isDatabaseUnavailable(e as { code?: string; message?: string })) throw e;
      await limiter?.take(reply, `ip:${req.ip}`, await limiter.limitFor(undefined));
      throw unauthorized('invalid, expired or revoked token, or not a developer console token');
    }
    if (limiter) await limiter.take(reply, `console:${user.userId}`, await limiter.limitFor(undefined));
    req.consoleUser = user;
  };
}
