/**
 * Tokens for a signed-in user: an access token tied to its token family (so revoking the family
 * revokes it, RFC 9700 §4.14.2) and, when `offline_access` was granted, a refresh token of the same
 * family (docs/api/auth.md#refresh-tokens).
 */
import type { UserRole } from '../db/schema.js';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { secretToken } from '../lib/ids.js';
import { hashToken } from '../lib/secrets.js';
import { signAccessToken, type IssuedToken } from './access-token.js';
import { REFRESH_IDLE_TTL_MS } from './lifetimes.js';
import type { KeyStore } from './signing-keys.js';

export interface UserTokenResponse extends IssuedToken {
  refresh_token?: string;
}

export interface TokenSubject {
  familyId: string;
  clientId: string;
  developerId: string;
  user: { id: string; role: UserRole; providerId: string | null };
  /** Scopes of the access token (the family's, or a narrower set on refresh). */
  scopes: string[];
  anonymousSubject: string | null;
}

/** Revokes a token family: its access tokens stop verifying and its refresh tokens stop working. */
export async function revokeFamily(db: Db, familyId: string): Promise<void> {
  await db.updateTable('token_families').set({ revoked_at: new Date() }).where('id', '=', familyId).where('revoked_at', 'is', null).execute();
}

/**
 * Stores a new refresh token of a family (hash only) and returns it. It expires after 15 idle
 * days, and never after the family's end (30 days after sign-in), docs/api/auth.md#lifetimes.
 */
export async function insertRefreshToken(db: Db, familyId: string, familyExpiresAt: Date): Promise<string> {
  const token = secretToken();
  const idle = Math.min(Date.now() + REFRESH_IDLE_TTL_MS, familyExpiresAt.getTime());
  await db.insertInto('refresh_tokens').values({ token_hash: hashToken(token), family_id: familyId, idle_expires_at: new Date(idle) }).execute();
  return token;
}

/** Signs a user access token (RFC 9068) carrying the family id, role and provider id. */
export function signUserAccessToken(deps: { config: Config; keys: KeyStore }, s: TokenSubject): Promise<IssuedToken> {
  return signAccessToken(
    deps.keys,
    { issuer: deps.config.authUrl, audience: deps.config.audience, subject: s.user.id },
    {
      env: deps.config.appEnv,
      dev: s.developerId,
      knd: 'user',
      client_id: s.clientId,
      scope: s.scopes.join(' '),
      fid: s.familyId,
      role: s.user.role,
      pid: s.user.providerId,
      ...(s.anonymousSubject ? { anon: s.anonymousSubject } : {}),
    },
  );
}
