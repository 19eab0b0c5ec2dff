/**
 * Access-token signing keys (issue #3 §3): ES256 key pairs kept in the database, generated on first
 * use and rotatable. The newest unretired key signs; every unretired key (and keys retired less than
 * a token lifetime ago) verifies and is published in the JWKS.
 */
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { Db } from '../db/database.js';
import type { Env } from '../db/schema.js';
import { prefixedId } from '../lib/ids.js';

export const SIGNING_ALG = 'ES256';
/** Retired keys stay published this long so tokens they signed keep verifying (access token lifetime). */
const RETIRED_GRACE_MS = 60 * 60 * 1000;

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
}

/** Per-app cache of the signing key and the public JWKS of one environment. */
export class KeyStore {
  #signing: Promise<SigningKey> | undefined;
  #jwks: { keys: JWK[]; loadedAt: number } | undefined;

  constructor(private readonly db: Db, private readonly env: Env) {}

  /** The key that signs new tokens; generated and stored on first use. */
  signingKey(): Promise<SigningKey> {
    this.#signing ??= this.#loadOrCreate().catch((e: unknown) => {
      this.#signing = undefined;
      throw e;
    });
    return this.#signing;
  }

  async #loadOrCreate(): Promise<SigningKey> {
    const row = await this.db
      .selectFrom('signing_keys')
      .select(['kid', 'private_jwk'])
      .where('env', '=', this.env)
      .where('retired_at', 'is', null)
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    if (row) return { kid: row.kid, privateKey: (await importJWK(row.private_jwk as JWK, SIGNING_ALG)) as CryptoKey };
    return this.rotate();
  }

  /** Creates a new signing key and retires the others (they keep verifying for an hour). */
  async rotate(): Promise<SigningKey> {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const kid = prefixedId('key', 8);
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('signing_keys').set({ retired_at: new Date() }).where('env', '=', this.env).where('retired_at', 'is', null).execute();
      await trx.insertInto('signing_keys').values({ kid, env: this.env, alg: SIGNING_ALG, private_jwk: privateJwk, public_jwk: publicJwk }).execute();
    });
    const key = { kid, privateKey };
    this.#signing = Promise.resolve(key);
    this.#jwks = undefined;
    return key;
  }

  /** The public keys (RFC 7517 JWK Set), cached for `maxAgeMs`. */
  async publicJwks(maxAgeMs = 30_000): Promise<{ keys: JWK[] }> {
    if (this.#jwks && Date.now() - this.#jwks.loadedAt < maxAgeMs) return { keys: this.#jwks.keys };
    const since = new Date(Date.now() - RETIRED_GRACE_MS);
    const rows = await this.db
      .selectFrom('signing_keys')
      .select('public_jwk')
      .where('env', '=', this.env)
      .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', since)]))
      .orderBy('created_at', 'desc')
      .execute();
    const keys = rows.map((r) => r.public_jwk as JWK);
    this.#jwks = { keys, loadedAt: Date.now() };
    return { keys };
  }

  /** Forgets the cached JWKS (after a kid we do not know appears). */
  invalidate(): void {
    this.#jwks = undefined;
  }
}
