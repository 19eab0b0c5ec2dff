/**
 * Anonymous tokens (docs/api/auth.md#anonymous-tokens): one per end user of a developer's app, for
 * directory and reference reads without a sign-in. Each gets its own subject (`an_…`), which the
 * authorization code flow can later link to the signed-in user (`anonymous_token` parameter).
 */
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { prefixedId } from '../lib/ids.js';
import { signAccessToken, type IssuedToken } from './access-token.js';
import type { KeyStore } from './signing-keys.js';

export class UnknownAppClient extends Error {}

/**
 * Issues an anonymous access token for `appClientId`, which must be an OAuth client of
 * `developerId` in this environment. The token carries no scope: the API admits it on directory and
 * reference reads only (RFC 6750 bearer usage unchanged).
 */
export async function issueAnonymousToken(
  deps: { config: Config; db: Db; keys: KeyStore },
  developerId: string,
  appClientId: string,
): Promise<Omit<IssuedToken, 'scope'>> {
  const client = await deps.db
    .selectFrom('oauth_clients')
    .select('client_id')
    .where('client_id', '=', appClientId)
    .where('developer_id', '=', developerId)
    .where('env', '=', deps.config.appEnv)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!client) throw new UnknownAppClient(`${appClientId} is not a client of your developer account`);
  const { access_token, token_type, expires_in } = await signAccessToken(
    deps.keys,
    { issuer: deps.config.authUrl, audience: deps.config.audience, subject: prefixedId('an', 16) },
    { env: deps.config.appEnv, dev: developerId, knd: 'anonymous', client_id: client.client_id, scope: '' },
  );
  return { access_token, token_type, expires_in };
}
