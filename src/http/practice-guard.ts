/**
 * The bearer-token guard of the Practice API (docs/decisions/0014-practice-workspace.md, "Sign-in",
 * "Rate limits"): an `onRequest` hook for every `/practice/v1` route. No token is 401 with a bare
 * challenge, a token that is not a live practice token is 401 `invalid_token` (RFC 6750 §3), both
 * with `WWW-Authenticate`; a good one sets `req.staff` and is counted against the staff user's rate
 * limit (the `/v1` window, `RATE_LIMIT_PER_MINUTE`). Scopes are checked by each route
 * (`requirePracticeScope`).
 */
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { PracticeTokenVerifier } from '../auth/practice-token.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { authenticationRequired, unauthorized } from '../domain/errors.js';
import type { StaffPrincipal } from '../domain/practices/staff-principal.js';
import { bearerToken } from './auth-guard.js';
import './practice-request.js';
import type { RateLimiter } from './rate-limit.js';

/** Builds the Practice API's `onRequest` hook over `verifier`, counting calls with `limiter`. */
export function makePracticeGuard(verifier: PracticeTokenVerifier, limiter?: RateLimiter): onRequestAsyncHookHandler {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const token = bearerToken(req);
    if (!token) {
      await limiter?.take(reply, `ip:${req.ip}`, await limiter.limitFor(undefined));
      if (!/^\s*bearer\b/i.test(req.headers.authorization ?? '')) throw authenticationRequired('sign in to the practice workspace: missing bearer token');
      throw unauthorized('malformed bearer token');
    }
    let staff: StaffPrincipal;
    try {
      staff = await verifier.verify(token);
    } catch (e) {
      // A database outage while reading the membership is a 503, not a bad token.
      if (isDatabaseUnavailable(e as { code?: string; message?: string })) throw e;
      await limiter?.take(reply, `ip:${req.ip}`, await limiter.limitFor(undefined));
      throw unauthorized('invalid, expired or revoked token, or not a member of a practice');
    }
    if (limiter) await limiter.take(reply, `staff:${staff.userId}`, await limiter.limitFor(undefined));
    req.staff = staff;
  };
}
