/**
 * Credential operations under `/v1` (docs/api/auth.md): anonymous end-user tokens
 * (`POST /v1/token/anonymous-user`, docs/api/auth.md#anonymous-tokens) and client secret rotation
 * (`POST /v1/credentials/rotate`). Thin handlers; the logic lives in `src/auth`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { issueAnonymousToken, UnknownAppClient } from '../../../auth/anonymous-token.js';
import { rotateClientSecret, UnknownConfidentialClient } from '../../../auth/rotate-secret.js';
import type { KeyStore } from '../../../auth/signing-keys.js';
import type { Config } from '../../../config.js';
import type { Db } from '../../../db/database.js';
import { principalOf } from '../../../http/auth-guard.js';
import { invalidInput } from '../../../domain/errors.js';
import { AnonymousTokenBody, AnonymousTokenResponse, ErrorBody, RotateBody, RotateResponse } from './schemas.js';

export interface CredentialRouteDeps {
  config: Config;
  db: Db;
  keys: KeyStore;
}

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };

export const credentialRoutes: FastifyPluginAsyncTypebox<CredentialRouteDeps> = async (app, deps) => {
  app.post(
    '/v1/token/anonymous-user',
    {
      onRequest: app.guard({ scope: 'external.anonymous_token.write' }),
      // The answer is a token: never kept for Idempotency-Key replays.
      config: { idempotency: 'withhold' },
      schema: {
        tags: ['auth'],
        summary: 'Issue an anonymous token for one end user of your app',
        body: AnonymousTokenBody,
        response: { 200: AnonymousTokenResponse, ...errors },
      },
    },
    async (req) => {
      const principal = principalOf(req);
      try {
        const data = await issueAnonymousToken(deps, principal.developerId, req.body.app_client_id);
        return { request_id: String(req.id), data };
      } catch (e) {
        if (e instanceof UnknownAppClient) throw invalidInput('app_client_id', e.message);
        throw e;
      }
    },
  );

  app.post(
    '/v1/credentials/rotate',
    {
      onRequest: app.guard({ scope: 'external.credential.rotate' }),
      // The answer is a secret: never kept for Idempotency-Key replays.
      config: { idempotency: 'withhold' },
      schema: {
        tags: ['auth'],
        summary: 'Rotate the secret of a machine-to-machine client',
        body: RotateBody,
        response: { 200: RotateResponse, ...errors },
      },
    },
    async (req) => {
      const principal = principalOf(req);
      try {
        const secret = await rotateClientSecret(deps.db, deps.config.appEnv, principal.developerId, req.body.application_client_id);
        req.log.info({ event: 'client_secret_rotated', client_id: req.body.application_client_id }, 'client secret rotated');
        return { request_id: String(req.id), data: { application_client_id: req.body.application_client_id, client_secret: secret } };
      } catch (e) {
        if (e instanceof UnknownConfidentialClient) throw invalidInput('application_client_id', e.message);
        throw e;
      }
    },
  );
};
