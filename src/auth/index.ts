/**
 * The OAuth 2 authorization server, mounted at the path of `{auth_url}` (default `/auth`):
 * authorization endpoint with its sign-in pages, token endpoint, JWKS, RFC 8414 metadata. Errors
 * inside it follow RFC 6749 §5.2 (JSON) or are error pages (HTML routes), never docs/api/errors.md#error-body.
 */
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { CLIENT_CREDENTIALS_SCOPES, AUTHORIZATION_CODE_SCOPES } from '../domain/credentials/scopes.js';
import { errorPage } from './authorize/pages.js';
import { OAuthError } from './oauth-errors.js';
import { DEFAULT_LOGIN_LIMITS, type LoginLimits } from './rate-limit.js';
import { authorizeRoutes, sendPage } from './routes/authorize.js';
import { tokenRoute } from './routes/token.js';
import type { KeyStore } from './signing-keys.js';
import { createTokenVerifier } from './token-verifier.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { DomainError } from '../domain/errors.js';
import { loggableError } from '../lib/loggable-error.js';
import { closeAfterAnswer } from '../http/lingering-close.js';
import type { RateLimiter } from '../http/rate-limit.js';

export interface AuthServerDeps {
  config: Config;
  db: Db;
  keys: KeyStore;
  /** Sign-in throttling; the defaults suit production. */
  loginLimits?: LoginLimits;
  /** The API's rate limiter; the token endpoint is limited per client address with it (docs/api/conventions.md#rate-limits). */
  limiter?: RateLimiter;
}

/** Whether the request, not the service, is at fault: a 4xx status, or a domain error other than `unavailable`. */
function callersFault(err: FastifyError): boolean {
  if (err instanceof DomainError) return err.kind !== 'unavailable';
  return !!err.statusCode && err.statusCode >= 400 && err.statusCode < 500;
}

export const authServer: FastifyPluginAsync<AuthServerDeps> = async (app, deps) => {
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(cookie);

  app.setErrorHandler((err: FastifyError, req, reply) => {
    if ((req.routeOptions.config as { html?: boolean } | undefined)?.html) {
      const status = callersFault(err) ? 400 : 500;
      if (status === 500) req.log.error({ err: loggableError(err) }, 'auth page error');
      return sendPage(reply, status, errorPage(status === 400 ? 'The request was malformed.' : 'Something went wrong on our side.'));
    }
    if (err instanceof OAuthError) {
      if (err.error === 'invalid_client') reply.header('www-authenticate', 'Basic realm="carebook", charset="UTF-8"');
      return reply.code(err.statusCode).send({ error: err.error, error_description: err.description });
    }
    if (err instanceof DomainError && callersFault(err)) {
      // A body the JSON parser refused (a forbidden key): say which and why.
      return reply.code(400).send({ error: 'invalid_request', error_description: err.errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join('; ') });
    }
    // A body too large (or of a type not taken) was not read: answer, then close without a reset.
    if (err.statusCode === 413 || err.statusCode === 415) closeAfterAnswer(req, reply);
    if (err.validation || (err.statusCode && err.statusCode < 500)) {
      // Every token error but invalid_client is 400 (RFC 6749 §5.2, docs/api/errors.md#errors-of-the-authorization-server), an
      // unsupported media type included.
      return reply.code(400).send({ error: 'invalid_request', error_description: err.validation ? `${err.validationContext ?? 'request'}${err.validation[0]?.instancePath ?? ''} ${err.validation[0]?.message ?? 'is invalid'}` : 'malformed request' });
    }
    if (isDatabaseUnavailable(err)) {
      // RFC 6749 §4.1.2.1 temporarily_unavailable; 503 like the API (found by test/ops/pg-restart.test.ts).
      req.log.error({ err: { message: err.message, code: err.code } }, 'database unavailable');
      return reply.code(503).header('retry-after', '5').send({ error: 'temporarily_unavailable', error_description: 'service temporarily unavailable' });
    }
    req.log.error({ err: loggableError(err) }, 'auth server error');
    return reply.code(500).send({ error: 'server_error', error_description: 'internal error' });
  });

  tokenRoute(app, deps);
  authorizeRoutes(app, {
    config: deps.config,
    db: deps.db,
    verifier: createTokenVerifier({ config: deps.config, db: deps.db, keys: deps.keys }),
    limits: deps.loginLimits ?? DEFAULT_LOGIN_LIMITS,
    limiter: deps.limiter,
  });

  app.get('/.well-known/jwks.json', { schema: { tags: ['auth'], summary: 'Public signing keys (RFC 7517)', security: [] } }, async (_req, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    return deps.keys.publicJwks();
  });

  app.get('/.well-known/oauth-authorization-server', { schema: { tags: ['auth'], summary: 'Server metadata (RFC 8414)', security: [] } }, async () => ({
    issuer: deps.config.authUrl,
    authorization_endpoint: `${deps.config.authUrl}/authorize`,
    token_endpoint: `${deps.config.authUrl}/oauth/token`,
    jwks_uri: `${deps.config.authUrl}/.well-known/jwks.json`,
    grant_types_supported: ['client_credentials', 'authorization_code', 'refresh_token'],
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    scopes_supported: [...new Set([...CLIENT_CREDENTIALS_SCOPES, ...AUTHORIZATION_CODE_SCOPES])],
  }));
};
