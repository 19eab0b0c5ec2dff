/**
 * `POST {auth_url}/oauth/token` (RFC 6749 §3.2, docs/api/errors.md#errors-of-the-authorization-server): JSON or form-encoded body, client
 * authentication by body or HTTP Basic, errors as RFC 6749 §5.2. Grants: `client_credentials`
 * (§4.4), `authorization_code` with PKCE (§4.1.3, RFC 7636) and `refresh_token` (§6).
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { presentedCredentials } from '../client-authentication.js';
import { authorizationCodeGrant } from '../grants/authorization-code.js';
import { clientCredentialsGrant } from '../grants/client-credentials.js';
import { refreshTokenGrant } from '../grants/refresh-token.js';
import { OAuthError } from '../oauth-errors.js';
import type { KeyStore } from '../signing-keys.js';
import type { RateLimiter } from '../../http/rate-limit.js';
import { tokenRateLimit } from '../token-rate-limit.js';

export interface TokenRouteDeps {
  config: Config;
  db: Db;
  keys: KeyStore;
  /** Per-address limit of token requests (docs/api/conventions.md#rate-limits); none when undefined. */
  limiter?: RateLimiter | undefined;
}

const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  scope: Type.String(),
  refresh_token: Type.Optional(Type.String()),
});

const OAuthErrorBody = Type.Object({ error: Type.String(), error_description: Type.String() });

const TokenRequest = Type.Object(
  {
    grant_type: Type.String({ description: 'client_credentials, authorization_code or refresh_token' }),
    client_id: Type.Optional(Type.String()),
    client_secret: Type.Optional(Type.String()),
    audience: Type.Optional(Type.String()),
    scope: Type.Optional(Type.String()),
    code: Type.Optional(Type.String()),
    redirect_uri: Type.Optional(Type.String()),
    code_verifier: Type.Optional(Type.String()),
    refresh_token: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export function tokenRoute(app: FastifyInstance, deps: TokenRouteDeps): void {
  app.post(
    '/oauth/token',
    {
      // Counted before the body is read, so malformed requests are limited too.
      ...(deps.limiter ? { onRequest: tokenRateLimit(deps.limiter) } : {}),
      schema: {
        tags: ['auth'],
        summary: 'Issue an access token',
        security: [],
        body: TokenRequest,
        response: { 200: TokenResponse, 400: OAuthErrorBody, 401: OAuthErrorBody, 429: OAuthErrorBody },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const body = (req.body ?? {}) as Record<string, unknown>;
      const creds = presentedCredentials(req.headers.authorization, body);
      switch (body.grant_type) {
        case 'client_credentials':
          return clientCredentialsGrant(deps, creds, body);
        case 'authorization_code':
          return authorizationCodeGrant(deps, creds, body);
        case 'refresh_token':
          return refreshTokenGrant(deps, creds, body);
        default:
          throw new OAuthError('unsupported_grant_type', `unsupported grant_type ${JSON.stringify(body.grant_type)}`);
      }
    },
  );
}
