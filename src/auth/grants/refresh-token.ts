/**
 * The refresh token grant (RFC 6749 §6, docs/api/auth.md#refresh-tokens). Refresh tokens exist only for
 * families granted `offline_access`; each use rotates the token, and presenting a used one again
 * revokes the whole family (RFC 9700 §4.14.2). A refresh token lasts 15 days without use and never
 * beyond 30 days after the sign-in.
 */
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { hashToken } from '../../lib/secrets.js';
import { authenticateClient, type PresentedCredentials } from '../client-authentication.js';
import { OAuthError, type OAuthErrorCode } from '../oauth-errors.js';
import type { KeyStore } from '../signing-keys.js';
import { insertRefreshToken, revokeFamily, signUserAccessToken, type TokenSubject, type UserTokenResponse } from '../user-tokens.js';

type Outcome = { ok: true; subject: TokenSubject; refreshToken: string } | { ok: false; error: OAuthErrorCode; description: string };

/** Rotates a refresh token: a new access token and a new refresh token of the same family. */
export async function refreshTokenGrant(
  deps: { config: Config; db: Db; keys: KeyStore },
  creds: PresentedCredentials,
  body: Record<string, unknown>,
): Promise<UserTokenResponse> {
  const { config, db } = deps;
  const client = await authenticateClient(db, config.appEnv, creds, false);
  const presented = body.refresh_token;
  if (typeof presented !== 'string' || presented === '') throw new OAuthError('invalid_request', 'refresh_token is required');
  const requestedScope = body.scope;
  if (requestedScope !== undefined && typeof requestedScope !== 'string') throw new OAuthError('invalid_request', 'scope must be a string');

  const outcome = await db.transaction().execute(async (trx): Promise<Outcome> => {
    const row = await trx
      .selectFrom('refresh_tokens as r')
      .innerJoin('token_families as f', 'f.id', 'r.family_id')
      .innerJoin('oauth_clients as o', 'o.client_id', 'f.client_id')
      .innerJoin('users as u', 'u.id', 'f.user_id')
      .select([
        'r.token_hash', 'r.used_at', 'r.idle_expires_at', 'f.id as family_id', 'f.client_id', 'f.scopes', 'f.absolute_expires_at',
        'f.revoked_at', 'f.anonymous_subject', 'o.developer_id', 'u.id as user_id', 'u.role', 'u.provider_id',
      ])
      .where('r.token_hash', '=', hashToken(presented))
      .where('f.env', '=', config.appEnv)
      .forUpdate()
      .executeTakeFirst();
    const invalid = (description: string): Outcome => ({ ok: false, error: 'invalid_grant', description });
    if (!row) return invalid('refresh token is invalid');
    if (row.client_id !== client.client_id) return invalid('refresh token is invalid');
    if (row.revoked_at) return invalid('refresh token has been revoked');
    if (row.used_at) {
      // Reuse of a rotated token: someone holds a copy. Revoke everything of this sign-in.
      await revokeFamily(trx, row.family_id);
      return invalid('refresh token was already used; the whole token family is revoked');
    }
    const now = Date.now();
    if (row.idle_expires_at.getTime() <= now || row.absolute_expires_at.getTime() <= now) return invalid('refresh token has expired');
    if (!row.scopes.includes('offline_access')) return invalid('offline_access was not granted');
    let scopes = row.scopes;
    if (requestedScope !== undefined && requestedScope.trim() !== '') {
      const want = [...new Set(requestedScope.split(' ').filter(Boolean))];
      const extra = want.filter((s) => !row.scopes.includes(s));
      if (extra.length) return { ok: false, error: 'invalid_scope', description: `scope exceeds the original grant: ${extra.join(' ')}` };
      scopes = want;
    }
    await trx.updateTable('refresh_tokens').set({ used_at: new Date(now) }).where('token_hash', '=', row.token_hash).execute();
    const refreshToken = await insertRefreshToken(trx, row.family_id, row.absolute_expires_at);
    return {
      ok: true,
      refreshToken,
      subject: {
        familyId: row.family_id,
        clientId: row.client_id,
        developerId: row.developer_id,
        user: { id: row.user_id, role: row.role, providerId: row.provider_id },
        scopes,
        anonymousSubject: row.anonymous_subject,
      },
    };
  });

  if (!outcome.ok) throw new OAuthError(outcome.error, outcome.description);
  const issued = await signUserAccessToken(deps, outcome.subject);
  return { ...issued, refresh_token: outcome.refreshToken };
}
