/**
 * The client credentials grant (RFC 6749 §4.4, docs/api/auth.md#client-credentials): a confidential client gets a token
 * for its developer, with `audience` equal to the environment's `${PUBLIC_BASE_URL}/`.
 */
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { signAccessToken, type IssuedToken } from '../access-token.js';
import { authenticateClient, grantScopes, type PresentedCredentials } from '../client-authentication.js';
import { OAuthError } from '../oauth-errors.js';
import type { KeyStore } from '../signing-keys.js';

export async function clientCredentialsGrant(
  deps: { config: Config; db: Db; keys: KeyStore },
  creds: PresentedCredentials,
  body: Record<string, unknown>,
): Promise<IssuedToken> {
  const client = await authenticateClient(deps.db, deps.config.appEnv, creds, true);
  const audience = body.audience;
  if (audience === undefined || audience === '') throw new OAuthError('invalid_request', 'audience is required');
  if (audience !== deps.config.audience) {
    throw new OAuthError('invalid_request', `audience must be ${deps.config.audience} in this environment`);
  }
  const scopes = grantScopes(body.scope, client.scopes);
  return signAccessToken(
    deps.keys,
    { issuer: deps.config.authUrl, audience: deps.config.audience, subject: client.client_id },
    { env: deps.config.appEnv, dev: client.developer_id, knd: 'client', client_id: client.client_id, scope: scopes.join(' ') },
  );
}
