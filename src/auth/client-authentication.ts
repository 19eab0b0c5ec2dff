/**
 * Client authentication at the token endpoint (RFC 6749 §2.3.1): HTTP Basic or `client_id` and
 * `client_secret` in the body, never both. Secrets are compared as hashes in constant time; after an
 * overlapping rotation the previous secret is accepted too until its grace period ends, and a
 * revoked client is refused (docs/decisions/0015-developer-console.md, "Apps").
 */
import type { Db } from '../db/database.js';
import type { Env, OauthClientsTable } from '../db/schema.js';
import { tokenMatches } from '../lib/secrets.js';
import { OAuthError } from './oauth-errors.js';

export type OauthClient = Pick<OauthClientsTable, 'client_id' | 'developer_id' | 'kind' | 'scopes'> & { redirect_uris: string[] };

export interface PresentedCredentials {
  clientId: string | undefined;
  clientSecret: string | undefined;
  viaBasic: boolean;
}

/**
 * Undoes the `application/x-www-form-urlencoded` encoding of a Basic credential part
 * (RFC 6749 §2.3.1); bad percent-encoding is `invalid_client` (RFC 6749 §5.2), not a server error.
 */
function formDecode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    throw new OAuthError('invalid_client', 'malformed Basic credentials');
  }
}

/** Reads client credentials from `Authorization: Basic` (form-urlencoded parts, RFC 6749 §2.3.1) or the body. */
export function presentedCredentials(authorization: string | undefined, body: Record<string, unknown>): PresentedCredentials {
  const bodyId = typeof body.client_id === 'string' ? body.client_id : undefined;
  const bodySecret = typeof body.client_secret === 'string' ? body.client_secret : undefined;
  if (authorization && /^Basic /i.test(authorization)) {
    if (bodySecret !== undefined) throw new OAuthError('invalid_request', 'use one client authentication method');
    const decoded = Buffer.from(authorization.slice(6).trim(), 'base64').toString('utf8');
    const i = decoded.indexOf(':');
    if (i < 0) throw new OAuthError('invalid_client', 'malformed Basic credentials');
    const id = formDecode(decoded.slice(0, i));
    const secret = formDecode(decoded.slice(i + 1));
    if (bodyId !== undefined && bodyId !== id) throw new OAuthError('invalid_request', 'client_id differs from Basic credentials');
    return { clientId: id, clientSecret: secret, viaBasic: true };
  }
  return { clientId: bodyId, clientSecret: bodySecret, viaBasic: false };
}

/**
 * Finds the client and checks its secret (confidential clients) — the same error whatever failed,
 * so the endpoint does not reveal which client ids exist. Both the current and the previous secret
 * are compared every time (constant time, whichever matches), the previous one counting only
 * before `previous_secret_expires_at`.
 */
export async function authenticateClient(db: Db, env: Env, creds: PresentedCredentials, requireSecret: boolean): Promise<OauthClient> {
  if (!creds.clientId) throw new OAuthError('invalid_client', 'client authentication failed');
  const row = await db
    .selectFrom('oauth_clients')
    .select(['client_id', 'developer_id', 'kind', 'scopes', 'secret_hash', 'redirect_uris', 'previous_secret_hash', 'previous_secret_expires_at', 'revoked_at'])
    .where('client_id', '=', creds.clientId)
    .where('env', '=', env)
    .executeTakeFirst();
  const fakeHash = '0'.repeat(64);
  if (row?.kind === 'confidential' || requireSecret) {
    const secret = creds.clientSecret;
    const current = secret !== undefined && tokenMatches(secret, row?.secret_hash ?? fakeHash);
    const previous = secret !== undefined && tokenMatches(secret, row?.previous_secret_hash ?? fakeHash);
    const inGrace = !!row?.previous_secret_hash && !!row.previous_secret_expires_at && row.previous_secret_expires_at.getTime() > Date.now();
    const ok = current || (previous && inGrace);
    if (!row || !ok || row.kind !== 'confidential' || row.revoked_at) throw new OAuthError('invalid_client', 'client authentication failed');
  } else if (!row || row.revoked_at) {
    throw new OAuthError('invalid_client', 'client authentication failed');
  }
  return { client_id: row.client_id, developer_id: row.developer_id, kind: row.kind, scopes: row.scopes, redirect_uris: row.redirect_uris };
}

/**
 * Narrows the granted scopes to those requested (docs/api/auth.md#token-endpoint): without `scope`, every scope the
 * client holds; a requested scope the client does not hold is `invalid_scope`.
 */
export function grantScopes(requested: unknown, held: readonly string[]): string[] {
  if (requested === undefined || requested === null || requested === '') return [...held];
  if (typeof requested !== 'string') throw new OAuthError('invalid_request', 'scope must be a string');
  const want = [...new Set(requested.split(' ').filter(Boolean))];
  const missing = want.filter((s) => !held.includes(s));
  if (missing.length) throw new OAuthError('invalid_scope', `scope not allowed for this client: ${missing.join(' ')}`);
  return want;
}
