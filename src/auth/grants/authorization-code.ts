/**
 * The authorization code grant (RFC 6749 §4.1.3, docs/api/auth.md#authorization-code-with-pkce) with PKCE S256 required
 * (RFC 7636 §4.5–4.6). A code is single-use, lives 60 seconds and is bound to the client, the
 * redirect URI and the code verifier. Presenting a used code again revokes every token issued with
 * it (RFC 6749 §4.1.2, RFC 9700 §4.5).
 */
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { hashToken } from '../../lib/secrets.js';
import { authenticateClient, type PresentedCredentials } from '../client-authentication.js';
import { OAuthError, type OAuthErrorCode } from '../oauth-errors.js';
import { isValidVerifier, verifierMatches } from '../pkce.js';
import type { KeyStore } from '../signing-keys.js';
import { insertRefreshToken, revokeFamily, signUserAccessToken, type TokenSubject, type UserTokenResponse } from '../user-tokens.js';

type Outcome = { ok: true; subject: TokenSubject; refreshToken?: string } | { ok: false; error: OAuthErrorCode; description: string };

function requiredString(body: Record<string, unknown>, name: string): string {
  const v = body[name];
  if (typeof v !== 'string' || v === '') throw new OAuthError('invalid_request', `${name} is required`);
  return v;
}

/** Exchanges a code for tokens; every failure is an RFC 6749 §5.2 error. */
export async function authorizationCodeGrant(
  deps: { config: Config; db: Db; keys: KeyStore },
  creds: PresentedCredentials,
  body: Record<string, unknown>,
): Promise<UserTokenResponse> {
  const { config, db } = deps;
  const client = await authenticateClient(db, config.appEnv, creds, false);
  const code = requiredString(body, 'code');
  const redirectUri = requiredString(body, 'redirect_uri');
  if (body.code_verifier === undefined || body.code_verifier === '') {
    throw new OAuthError('invalid_request', 'code_verifier is required (PKCE, RFC 7636)');
  }
  const verifier = body.code_verifier;
  if (typeof verifier !== 'string' || !isValidVerifier(verifier)) {
    throw new OAuthError('invalid_request', 'code_verifier must be 43 to 128 characters of [A-Za-z0-9-._~]');
  }

  const outcome = await db.transaction().execute(async (trx): Promise<Outcome> => {
    const row = await trx
      .selectFrom('authorization_codes as c')
      .innerJoin('token_families as f', 'f.id', 'c.family_id')
      .innerJoin('oauth_clients as o', 'o.client_id', 'c.client_id')
      .innerJoin('users as u', 'u.id', 'c.user_id')
      .select([
        'c.code_hash', 'c.client_id', 'c.redirect_uri', 'c.code_challenge', 'c.scopes', 'c.expires_at', 'c.used_at', 'c.family_id',
        'f.absolute_expires_at', 'f.anonymous_subject', 'f.revoked_at', 'o.developer_id', 'u.id as user_id', 'u.role', 'u.provider_id',
      ])
      .where('c.code_hash', '=', hashToken(code))
      .where('c.env', '=', config.appEnv)
      .forUpdate()
      .executeTakeFirst();
    const invalid = (description: string): Outcome => ({ ok: false, error: 'invalid_grant', description });
    if (!row) return invalid('authorization code is invalid');
    // Bound to the client: another client presenting it learns nothing and does not burn it.
    if (row.client_id !== client.client_id) return invalid('authorization code is invalid');
    if (row.used_at) {
      await revokeFamily(trx, row.family_id);
      return invalid('authorization code was already used; the tokens issued with it are revoked');
    }
    await trx.updateTable('authorization_codes').set({ used_at: new Date() }).where('code_hash', '=', row.code_hash).execute();
    if (row.expires_at.getTime() <= Date.now()) return invalid('authorization code has expired');
    if (row.redirect_uri !== redirectUri) return invalid('redirect_uri does not match the authorization request');
    if (!verifierMatches(verifier, row.code_challenge)) return invalid('code_verifier does not match the code_challenge');
    if (row.revoked_at) return invalid('authorization code is invalid');
    const subject: TokenSubject = {
      familyId: row.family_id,
      clientId: row.client_id,
      developerId: row.developer_id,
      user: { id: row.user_id, role: row.role, providerId: row.provider_id },
      scopes: row.scopes,
      anonymousSubject: row.anonymous_subject,
    };
    if (!row.scopes.includes('offline_access')) return { ok: true, subject };
    return { ok: true, subject, refreshToken: await insertRefreshToken(trx, row.family_id, row.absolute_expires_at) };
  });

  if (!outcome.ok) throw new OAuthError(outcome.error, outcome.description);
  const issued = await signUserAccessToken(deps, outcome.subject);
  return outcome.refreshToken ? { ...issued, refresh_token: outcome.refreshToken } : issued;
}
