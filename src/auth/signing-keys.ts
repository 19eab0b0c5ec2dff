/**
 * Access-token signing keys (issue #3 §3): ES256 key pairs kept in the database, generated on first
 * use and rotatable. The newest unretired key signs; every unretired key (and keys retired less than
 * a token lifetime ago) verifies and is published in the JWKS. Private keys are stored sealed under
 * the operator's key-encryption key (src/auth/key-encryption.ts); a key an older version stored in
 * clear is sealed at the first load.
 */
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Env } from '../db/schema.js';
import { prefixedId } from '../lib/ids.js';
import { isSealed, KeyEncryptionError, openJwk, sealJwk, signingKeyAad, type KeyEncryption } from './key-encryption.js';
import { schemaLockId } from '../db/advisory-locks.js';

export const SIGNING_ALG = 'ES256';
/** How long a process keeps signing with the key it loaded before looking for a newer one. */
const SIGNING_KEY_RECHECK_MS = 60 * 1000;
/**
 * Retired keys stay published this long so tokens they signed keep verifying: the access-token
 * lifetime, plus the time another process may still sign with a key it loaded before the rotation.
 */
const RETIRED_GRACE_MS = 60 * 60 * 1000 + 2 * SIGNING_KEY_RECHECK_MS;
/** A token with an unknown `kid` reloads the JWKS at most this often (forged tokens cannot hammer the database). */
const JWKS_RELOAD_MIN_INTERVAL_MS = 1000;

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
}

/** Per-app cache of the signing key and the public JWKS of one environment. */
export class KeyStore {
  #signing: Promise<SigningKey> | undefined;
  #signingLoadedAt = 0;
  #jwks: { keys: JWK[]; loadedAt: number } | undefined;
  #reloading: Promise<void> | undefined;

  /**
   * `keys` seal and open private keys; without them the store still serves the public JWKS (token
   * verification) but cannot sign.
   */
  constructor(private readonly db: Db, private readonly env: Env, private readonly keys?: KeyEncryption) {}

  #kek(): KeyEncryption {
    if (!this.keys) throw new KeyEncryptionError('no key-encryption key is configured: this process cannot sign tokens (set KEY_ENCRYPTION_KEY)');
    return this.keys;
  }

  /** The row identity a sealed key is bound to. */
  #aad(kid: string): string {
    return signingKeyAad(this.env, kid);
  }

  /**
   * The key that signs new tokens; generated and stored on first use. Re-read from the database
   * every minute, so a rotation by another process (or `carebook keys rotate`) takes effect everywhere.
   */
  signingKey(): Promise<SigningKey> {
    if (this.#signing && Date.now() - this.#signingLoadedAt > SIGNING_KEY_RECHECK_MS) this.#signing = undefined;
    if (!this.#signing) {
      this.#signingLoadedAt = Date.now();
      this.#signing = this.#loadOrCreate().catch((e: unknown) => {
        this.#signing = undefined;
        throw e;
      });
    }
    return this.#signing;
  }

  async #loadOrCreate(): Promise<SigningKey> {
    const current = await this.#loadCurrent();
    if (current) return current;
    // First start: create the key under a lock, so concurrent processes agree on one key.
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${schemaLockId(`carebook.signing_keys.${this.env}`)})`.execute(trx);
      const again = await this.#loadCurrent(trx);
      return again ?? this.#insertNewKey(trx);
    });
  }

  async #loadCurrent(db: Db = this.db): Promise<SigningKey | undefined> {
    const row = await db
      .selectFrom('signing_keys')
      .select(['kid', 'private_jwk'])
      .where('env', '=', this.env)
      .where('retired_at', 'is', null)
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    if (!row) return undefined;
    let jwk: JWK;
    if (isSealed(row.private_jwk)) {
      jwk = openJwk(row.private_jwk, this.#kek(), this.#aad(row.kid));
    } else {
      // Stored in clear by an older version: seal every such key of this environment now.
      jwk = row.private_jwk as JWK;
      await this.sealClearKeys(db);
    }
    return { kid: row.kid, privateKey: (await importJWK(jwk, SIGNING_ALG)) as CryptoKey };
  }

  /**
   * Seals every private key of this environment still stored in clear (by a version before keys
   * were encrypted at rest); returns how many. Idempotent: sealed rows are left alone.
   */
  async sealClearKeys(db: Db = this.db): Promise<number> {
    const kek = this.#kek();
    const rows = await db.selectFrom('signing_keys').select(['kid', 'private_jwk']).where('env', '=', this.env).execute();
    let sealed = 0;
    for (const row of rows) {
      if (isSealed(row.private_jwk)) continue;
      const value = sealJwk(row.private_jwk as JWK, kek.current, this.#aad(row.kid));
      const done = await db
        .updateTable('signing_keys')
        .set({ private_jwk: value })
        .where('kid', '=', row.kid)
        .where(sql<boolean>`private_jwk->>'sealed' IS NULL`)
        .executeTakeFirst();
      sealed += Number(done.numUpdatedRows);
    }
    return sealed;
  }

  /**
   * Re-seals every private key of this environment under the current KEK (a KEK rotation:
   * `carebook keys rewrap`, with the old KEK as KEY_ENCRYPTION_KEY_PREVIOUS), in one transaction;
   * returns how many keys it re-sealed.
   */
  async rewrap(): Promise<number> {
    const kek = this.#kek();
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${schemaLockId(`carebook.signing_keys.${this.env}`)})`.execute(trx);
      const rows = await trx.selectFrom('signing_keys').select(['kid', 'private_jwk']).where('env', '=', this.env).forUpdate().execute();
      for (const row of rows) {
        const jwk = isSealed(row.private_jwk) ? openJwk(row.private_jwk, kek, this.#aad(row.kid)) : (row.private_jwk as JWK);
        const value = sealJwk(jwk, kek.current, this.#aad(row.kid));
        await trx.updateTable('signing_keys').set({ private_jwk: value }).where('kid', '=', row.kid).execute();
      }
      this.#signing = undefined;
      return rows.length;
    });
  }

  async #insertNewKey(trx: Db): Promise<SigningKey> {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const kid = prefixedId('key', 8);
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
    const privateJwk = sealJwk({ ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG }, this.#kek().current, this.#aad(kid));
    await trx.updateTable('signing_keys').set({ retired_at: new Date() }).where('env', '=', this.env).where('retired_at', 'is', null).execute();
    await trx.insertInto('signing_keys').values({ kid, env: this.env, alg: SIGNING_ALG, private_jwk: privateJwk, public_jwk: publicJwk }).execute();
    return { kid, privateKey };
  }

  /**
   * Creates a new signing key and retires the others; retired keys stay in the JWKS (and keep
   * verifying) for an access-token lifetime, so no token in flight is refused. The operator runs
   * it as `carebook keys rotate`; the JWKS (RFC 7517) shows the new key at once.
   */
  async rotate(): Promise<SigningKey> {
    const key = await this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${schemaLockId(`carebook.signing_keys.${this.env}`)})`.execute(trx);
      return this.#insertNewKey(trx);
    });
    this.#signing = Promise.resolve(key);
    this.#signingLoadedAt = Date.now();
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

  /**
   * Reloads the JWKS after a `kid` we do not know appears (a rotation by another process). Reloads
   * are coalesced and happen at most once a second, so tokens with made-up `kid`s wait a little
   * instead of turning into database load.
   */
  reloadAfterUnknownKid(): Promise<void> {
    this.#reloading ??= (async () => {
      const since = this.#jwks ? Date.now() - this.#jwks.loadedAt : Infinity;
      if (since < JWKS_RELOAD_MIN_INTERVAL_MS) await new Promise((r) => setTimeout(r, JWKS_RELOAD_MIN_INTERVAL_MS - since));
      this.#jwks = undefined;
      await this.publicJwks();
    })().finally(() => {
      this.#reloading = undefined;
    });
    return this.#reloading;
  }
}
