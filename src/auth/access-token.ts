/**
 * Access tokens: JWTs (RFC 9068 profile) signed with the environment's ES256 key. Claims:
 * `iss` = {auth_url}, `aud` = the environment's audience `${PUBLIC_BASE_URL}/`, `sub`, `client_id`,
 * `scope` (space-separated), `jti`, `iat`, `exp`, and Carebook's own: `env`, `dev` (developer id),
 * `knd` (client | user | anonymous), `fid` (token family, user tokens), `role` and `pid` (users),
 * `anon` (the anonymous session a user linked at sign-in).
 */
import type { UserRole } from '../db/schema.js';
import { SignJWT } from 'jose';
import { prefixedId } from '../lib/ids.js';
import type { Env } from '../db/schema.js';
import { ACCESS_TOKEN_TTL_SECONDS } from './lifetimes.js';
import { SIGNING_ALG, type KeyStore } from './signing-keys.js';

export { ACCESS_TOKEN_TTL_SECONDS };

export interface AccessTokenClaims {
  env: Env;
  dev: string;
  knd: 'client' | 'user' | 'anonymous';
  client_id: string;
  scope: string;
  fid?: string;
  role?: UserRole;
  pid?: string | null;
  /** The anonymous session linked at sign-in (the `sub` of the anonymous token), user tokens only. */
  anon?: string;
}

export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

/** Signs an access token (RFC 9068 JWT profile, RFC 7519) with the environment's current key. */
export async function signAccessToken(
  keys: KeyStore,
  opts: { issuer: string; audience: string; subject: string; ttlSeconds?: number },
  claims: AccessTokenClaims,
): Promise<IssuedToken> {
  const ttl = opts.ttlSeconds ?? ACCESS_TOKEN_TTL_SECONDS;
  const { kid, privateKey } = await keys.signingKey();
  const token = await new SignJWT({ ...claims })
    .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: 'at+jwt' })
    .setIssuer(opts.issuer)
    .setAudience(opts.audience)
    .setSubject(opts.subject)
    .setJti(prefixedId('at', 12))
    .setIssuedAt()
    .setExpirationTime(`${ttl}s`)
    .sign(privateKey);
  return { access_token: token, token_type: 'Bearer', expires_in: ttl, scope: claims.scope };
}
