/**
 * Verifies API access tokens (docs/api/auth.md#authentication-errors): ES256 signature by a key of this environment's
 * JWKS, issuer, audience (the environment), expiry and not-before, and revocation of user token
 * families. With the auth server in this process the keys come straight from the database;
 * with `AUTH_URL` pointing elsewhere they come from `{auth_url}/.well-known/jwks.json`.
 */
import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Principal, TokenVerifier } from '../domain/credentials/principal.js';
import type { AccessTokenClaims } from './access-token.js';
import { consoleClientId } from '../domain/console/console-client.js';
import { workspaceClientId } from '../domain/practices/workspace-client.js';
import { KeyStore, SIGNING_ALG } from './signing-keys.js';

export class InvalidToken extends Error {}

/** How many verified tokens a verifier remembers (see `verifiedPayload`). */
const VERIFIED_CACHE_MAX = 10_000;
/** With a remote auth server, how long a cached verification is trusted before the signature is checked again. */
const REMOTE_RECHECK_MS = 60_000;

interface CachedToken {
  payload: JWTPayload & Partial<AccessTokenClaims>;
  expMs: number;
  /** The signing key's id: the entry is dropped once the key leaves the JWKS. */
  kid: string;
  checkedAt: number;
}

/** True when the auth server is mounted in this process (the default `AUTH_URL`). */
export function authServerIsLocal(config: Config): boolean {
  return config.authUrl === `${config.publicBaseUrl}/auth`;
}

/** The verified claims of an access token. */
export type VerifiedClaims = JWTPayload & Partial<AccessTokenClaims>;

/** Reads verified access tokens: shared by the `/v1` verifier and the Practice API's (src/auth/practice-token.ts). */
export interface AccessTokenReader {
  /** The claims of a token whose signature, issuer, audience and lifetime check out; throws otherwise. */
  read(token: string): Promise<VerifiedClaims>;
  /** Throws `InvalidToken` when the user token family `familyId` is revoked or unknown (checked only with the auth server in this process). */
  checkFamily(familyId: string): Promise<void>;
}

/**
 * Builds the access-token reader (docs/api/auth.md#authentication-errors; RFC 9068 JWT access tokens, RFC 7515/7517):
 * verified tokens are cached until `exp` but only while their signing key is still published.
 */
export function createAccessTokenReader(deps: { config: Config; db: Db; keys?: KeyStore }): AccessTokenReader {
  const { config, db } = deps;
  const local = authServerIsLocal(config);
  const keys = deps.keys ?? new KeyStore(db, config.appEnv);
  const remote = local ? undefined : createRemoteJWKSet(new URL(`${config.authUrl}/.well-known/jwks.json`));

  // One local JWK set per loaded key list: jose imports each key once per set, so building a new set
  // per request would re-import the EC key on every call (it was most of the cost of a read).
  // `publicJwks()` returns the same `keys` array until it reloads, so a new array means a new set.
  let keySet: { list: unknown; resolver: JWTVerifyGetKey; kids: Set<string> } | undefined;
  const localKeys = async (): Promise<{ resolver: JWTVerifyGetKey; kids: Set<string> }> => {
    const { keys: list } = await keys.publicJwks();
    if (keySet?.list !== list) {
      keySet = { list, resolver: createLocalJWKSet({ keys: list }), kids: new Set(list.flatMap((k) => (k.kid ? [k.kid] : []))) };
      forgetTokensOfRemovedKeys(keySet.kids);
    }
    return keySet;
  };

  async function verifySignature(token: string): Promise<{ payload: JWTPayload; kid: string | undefined }> {
    // RFC 9068 §4: `exp` is required; jose checks it (and `nbf`, `iss`, `aud`) when present.
    const opts = { issuer: config.authUrl, audience: config.audience, algorithms: [SIGNING_ALG], typ: 'at+jwt', requiredClaims: ['exp'] };
    const result = async (getKey: JWTVerifyGetKey) => {
      const { payload, protectedHeader } = await jwtVerify(token, getKey, opts);
      return { payload, kid: protectedHeader.kid };
    };
    if (remote) return result(remote);
    try {
      return await result((await localKeys()).resolver);
    } catch (e) {
      // A key we have not loaded yet (rotated by another process): reload once.
      if (e instanceof errors.JWKSNoMatchingKey) {
        await keys.reloadAfterUnknownKid();
        return result((await localKeys()).resolver);
      }
      throw e;
    }
  }

  // Verified tokens, by their text, until they expire (at most `VERIFIED_CACHE_MAX` of them, oldest
  // evicted first): a token is immutable, so a repeat call need not check its ES256 signature again,
  // which was the largest single cost of a cheap read. Every hit re-checks expiry and that the
  // signing key (`kid`) is still in the loaded JWKS: a key removed from the set (retired beyond its
  // grace period) drops its tokens at the next JWKS load. With a remote auth server, whose set jose
  // caches out of our sight, a hit is trusted for `REMOTE_RECHECK_MS` and then verified again. User
  // tokens still have their family's revocation checked on every call.
  const verified = new Map<string, CachedToken>();
  function forgetTokensOfRemovedKeys(kids: Set<string>): void {
    for (const [token, entry] of verified) if (!kids.has(entry.kid)) verified.delete(token);
  }
  async function stillValid(entry: CachedToken): Promise<boolean> {
    if (Date.now() >= entry.expMs) return false;
    if (remote) return Date.now() - entry.checkedAt < REMOTE_RECHECK_MS;
    return (await localKeys()).kids.has(entry.kid);
  }
  async function verifiedPayload(token: string): Promise<VerifiedClaims> {
    const hit = verified.get(token);
    if (hit) {
      if (await stillValid(hit)) return hit.payload;
      verified.delete(token);
    }
    const { payload, kid } = await verifySignature(token);
    if (typeof payload.exp === 'number' && kid !== undefined) {
      if (verified.size >= VERIFIED_CACHE_MAX) verified.delete(verified.keys().next().value!);
      verified.set(token, { payload, expMs: payload.exp * 1000, kid, checkedAt: Date.now() });
    }
    return payload;
  }

  return {
    read: verifiedPayload,
    async checkFamily(familyId: string): Promise<void> {
      if (!local) return;
      const family = await db.selectFrom('token_families').select(['revoked_at']).where('id', '=', familyId).executeTakeFirst();
      if (!family || family.revoked_at) throw new InvalidToken('token revoked');
    },
  };
}

/**
 * Builds the API's token verifier (docs/api/auth.md#authentication-errors): the `/v1` principals. Tokens of
 * practice staff and of the practice workspace client are refused here (docs/decisions/0014-practice-workspace.md),
 * as are console accounts' tokens and any token of the developer console client (docs/decisions/0015-developer-console.md).
 */
export function createTokenVerifier(deps: { config: Config; db: Db; keys?: KeyStore; reader?: AccessTokenReader }): TokenVerifier {
  const { config } = deps;
  const reader = deps.reader ?? createAccessTokenReader(deps);
  const workspaceClient = workspaceClientId(config.appEnv);
  const consoleClient = consoleClientId(config.appEnv);
  return {
    async verify(token: string): Promise<Principal> {
      const payload = await reader.read(token);
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
          // A practice's staff member signs in for the practice workspace, never as a patient of /v1.
          if (payload.role === 'staff') throw new InvalidToken('a practice staff token is not valid here');
          // Nor is any token of the practice workspace (a provider user's included): /v1 is the developers' interface.
          if (payload.client_id === workspaceClient) throw new InvalidToken('a practice workspace token is not valid here');
          // A console account manages developers through the Console API; it is nobody's patient on /v1.
          if (payload.role === 'developer' || payload.client_id === consoleClient) throw new InvalidToken('a developer console token is not valid here');
          await reader.checkFamily(payload.fid);
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
