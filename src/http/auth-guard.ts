/**
 * The bearer-token guard of `/v1` (docs/api/auth.md#authentication-errors). Routes declare what they need; the guard
 * verifies the token, attaches `request.principal`, and answers 401/403 with the error body and
 * `WWW-Authenticate` (RFC 6750 §3).
 */
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Principal, TokenVerifier } from '../domain/credentials/principal.js';
import type { Scope } from '../domain/credentials/scopes.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { authenticationRequired, forbidden, unauthorized } from '../domain/errors.js';
import type { RateLimiter } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
    /** The verified caller, set before scopes are checked: the request log records refused calls too. */
    caller?: Principal;
  }
}

export interface GuardOptions {
  /** Scope the operation needs; undefined means any valid token of the allowed kinds. */
  scope?: Scope;
  /** Anonymous tokens are accepted only on directory and reference reads. */
  allowAnonymous?: boolean;
  /** A provider user's token passes without `scope` (calendar of their own provider). */
  allowProviderUser?: boolean;
}

/** Reads `Authorization: Bearer <token>` (RFC 6750 §2.1); undefined when absent or malformed. */
export function bearerToken(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(h.trim());
  return m?.[1];
}

/**
 * Builds an `onRequest` hook that enforces the options below with the given verifier, and counts the call
 * against the credential's rate limit (or the client address's, without a valid token).
 */
export function makeGuard(verifier: TokenVerifier, limiter?: RateLimiter) {
  return function guard(opts: GuardOptions = {}): onRequestAsyncHookHandler {
    return async (req: FastifyRequest, reply: FastifyReply) => {
      const token = bearerToken(req);
      if (!token) {
        await limiter?.take(reply, `ip:${req.ip}`, await limiter.limitFor(undefined));
        // No bearer credentials at all: a challenge without an error code (RFC 6750 §3.1); a Bearer
        // header whose token is malformed is an invalid token.
        if (!/^\s*bearer\b/i.test(req.headers.authorization ?? '')) throw authenticationRequired('missing bearer token');
        throw unauthorized('malformed bearer token');
      }
      let principal: Principal;
      try {
        principal = await verifier.verify(token);
      } catch (e) {
        // A database outage while checking a user token's family is a 503, not a bad token (a 401
        // would make clients throw away a good token).
        if (isDatabaseUnavailable(e as { code?: string; message?: string })) throw e;
        await limiter?.take(reply, `ip:${req.ip}`, await limiter.limitFor(undefined));
        throw unauthorized('invalid or expired token');
      }
      req.caller = principal;
      if (limiter) {
        const who = principal.kind === 'user' ? `user:${principal.userId}` : principal.kind === 'anonymous' ? `anon:${principal.subject}` : `client:${principal.clientId}`;
        await limiter.take(reply, who, await limiter.limitFor(principal.developerId));
      }
      if (principal.kind === 'anonymous' && !opts.allowAnonymous) {
        throw forbidden(opts.scope, 'anonymous tokens may not call this operation');
      }
      if (opts.scope && !principal.scopes.has(opts.scope)) {
        const providerPass = opts.allowProviderUser && principal.kind === 'user' && principal.role === 'provider';
        if (!providerPass) throw forbidden(opts.scope, `token lacks scope ${opts.scope}`);
      }
      req.principal = principal;
    };
  };
}

export type Guard = ReturnType<typeof makeGuard>;

/** The principal set by the guard; a route without the guard calling this is a bug. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new Error('route used principalOf() without the auth guard');
  return req.principal;
}
