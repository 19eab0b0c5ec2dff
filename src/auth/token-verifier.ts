/**
 * Verifies API access tokens (contracts.md §3): ES256 signature by a key of this environment's
 * JWKS, issuer, audience (the environment), expiry and not-before, and revocation of user token
 * families. With the auth server in this process the keys come straight from the database;
 * with `AUTH_URL` pointing elsewhere they come from `{auth_url}/.well-known/jwks.json`.
 */
import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Principal, TokenVerifier } from '../domain/credentials/principal.js';
import type { AccessTokenClaims } from './access-token.js';
import { KeyStore, SIGNING_ALG } from './signing-keys.js';

export class InvalidToken extends Error {}

/** How many verified tokens a verifier remembers (see `verifiedPayload`). */
const VERIFIED_CACHE_MAX = 10_000;

/** True when the auth server is mounted in this process (the default `AUTH_URL`). */
export function authServerIsLocal(config: Config): boolean {
  return config.authUrl === `${config.publicBaseUrl}/auth`;
}

export function createTokenVerifier(deps: { config: Config; db: Db; keys?: KeyStore }): TokenVerifier {
  const { config, db } = deps;
  const local = authServerIsLocal(config);
  const keys = deps.keys ?? new KeyStore(db, config.appEnv);
  const remote = local ? undefined : createRemoteJWKSet(new URL(`${config.authUrl}/.well-known/jwks.json`));

  // One local JWK set per loaded key list: jose imports each key once per set, so building a new set
  // per request would re-import the EC key on every call (it was most of the cost of a read).
  let cached: { list: unknown; resolver: JWTVerifyGetKey } | undefined;
  const localResolver = async (): Promise<JWTVerifyGetKey> => {
    const { keys: list } = await keys.publicJwks();
    if (cached?.list !== list) cached = { list, resolver: createLocalJWKSet({ keys: list }) };
    return cached.resolver;
  };

  async function verifySignature(token: string): Promise<JWTPayload> {
    const opts = { issuer: config.authUrl, audience: config.audience, algorithms: [SIGNING_ALG], typ: 'at+jwt' };
    if (remote) return (await jwtVerify(token, remote, opts)).payload;
    try {
      return (await jwtVerify(token, await localResolver(), opts)).payload;
    } catch (e) {
      // A key we have not loaded yet (rotated by another process): reload once.
      if (e instanceof errors.JWKSNoMatchingKey) {
        await keys.reloadAfterUnknownKid();
        return (await jwtVerify(token, await localResolver(), opts)).payload;
      }
      throw e;
    }
  }

  // Verified tokens, by their text, until they expire (at most `VERIFIED_CACHE_MAX` of them, oldest
  // evicted first): a token is immutable, so a repeat call need not check its ES256 signature again,
  // which was the largest single cost of a cheap read. Expiry is re-checked on every hit, and user
  // tokens still have their family's revocation checked on every call.
  const verified = new Map<string, { payload: JWTPayload & Partial<AccessTokenClaims>; expMs: number }>();
  async function verifiedPayload(token: string): Promise<JWTPayload & Partial<AccessTokenClaims>> {
    const hit = verified.get(token);
    if (hit) {
      if (Date.now() < hit.expMs) return hit.payload;
      verified.delete(token);
    }
    const payload = (await verifySignature(token)) as JWTPayload & Partial<AccessTokenClaims>;
    if (typeof payload.exp === 'number') {
      if (verified.size >= VERIFIED_CACHE_MAX) verified.delete(verified.keys().next().value!);
      verified.set(token, { payload, expMs: payload.exp * 1000 });
    }
    return payload;
  }

  return {
    async verify(token: string): Promise<Principal> {
      const payload = await verifiedPayload(token);
      if (payload.env !== config.appEnv) throw new InvalidToken('token of another environment');
      if (typeof payload.dev !== 'string' || typeof payload.client_id !== 'string' || typeof payload.sub !== 'string') {
        throw new InvalidToken('token lacks required claims');
      }
      const scopes = new Set(typeof payload.scope === 'string' && payload.scope ? payload.scope.split(' ') : []);
      const base = { env: payload.env, developerId: payload.dev, clientId: payload.client_id, scopes };
      switch (payload.knd) {
        case 'client':
          return { kind: 'client', ...base };
        case 'anonymous':
          return { kind: 'anonymous', subject: payload.sub, ...base };
        case 'user': {
          if (typeof payload.fid !== 'string') throw new InvalidToken('user token without family');
          if (local) {
            const family = await db
              .selectFrom('token_families')
              .select(['revoked_at'])
              .where('id', '=', payload.fid)
              .executeTakeFirst();
            if (!family || family.revoked_at) throw new InvalidToken('token revoked');
          }
          return {
            kind: 'user',
            userId: payload.sub,
            role: payload.role === 'provider' ? 'provider' : 'patient',
            providerId: typeof payload.pid === 'string' ? payload.pid : null,
            ...base,
          };
        }
        default:
          throw new InvalidToken('unknown token kind');
      }
    },
  };
}
