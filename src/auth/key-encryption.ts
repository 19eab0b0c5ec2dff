/**
 * Signing keys encrypted at rest (docs/operator-guide.md, "The key-encryption key";
 * docs/decisions/0004-signing-keys-encrypted-at-rest.md). A private JWK is stored sealed with
 * AES-256-GCM under the operator's key-encryption key (KEK): a fresh 96-bit nonce per seal, the
 * row's environment and key id as additional authenticated data (a sealed key cannot be moved to
 * another row), and the KEK's id (the first 8 bytes of its SHA-256) beside the ciphertext, so a
 * wrong KEK is named as such. A database copied without the KEK cannot sign.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JWK } from 'jose';
import type { Config } from '../config.js';
import { ConfigError } from '../config.js';

/** The KEK that seals new keys and, during a KEK rotation, the one it replaces (still opens old seals). */
export interface KeyEncryption {
  current: Buffer;
  previous?: Buffer;
}

/** A private JWK as stored: sealed under the KEK `kek`. */
export interface SealedJwk {
  sealed: 'A256GCM';
  kek: string;
  iv: string;
  ct: string;
  tag: string;
}

export class KeyEncryptionError extends Error {}

/** The id of a KEK: the first 8 bytes of its SHA-256, hex. */
export function kekId(kek: Buffer): string {
  return createHash('sha256').update(kek).digest('hex').slice(0, 16);
}

/** The identity a sealed signing key is bound to (its row): environment and key id. */
export function signingKeyAad(env: string, kid: string): string {
  return `carebook.signing_keys:${env}:${kid}`;
}

/** Whether a stored value is a sealed JWK (as opposed to a key stored in clear by an older version). */
export function isSealed(v: unknown): v is SealedJwk {
  return !!v && typeof v === 'object' && (v as { sealed?: unknown }).sealed === 'A256GCM';
}

/** Seals a private JWK under `kek`, bound to `aad` (the row's identity). */
export function sealJwk(jwk: JWK, kek: Buffer, aad: string): SealedJwk {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv).setAAD(Buffer.from(aad));
  const ct = Buffer.concat([cipher.update(JSON.stringify(jwk), 'utf8'), cipher.final()]);
  return { sealed: 'A256GCM', kek: kekId(kek), iv: iv.toString('base64'), ct: ct.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
}

/** Opens a sealed JWK with whichever of the KEKs sealed it; throws `KeyEncryptionError` naming the problem. */
export function openJwk(sealed: SealedJwk, keys: KeyEncryption, aad: string): JWK {
  const kek = [keys.current, keys.previous].find((k) => k && kekId(k) === sealed.kek);
  if (!kek) {
    throw new KeyEncryptionError(
      `a signing key is sealed under key-encryption key ${sealed.kek}, which is not configured (configured: ${[keys.current, keys.previous].filter(Boolean).map((k) => kekId(k!)).join(', ')}); set KEY_ENCRYPTION_KEY (or KEY_ENCRYPTION_KEY_PREVIOUS during a rotation)`,
    );
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(sealed.iv, 'base64')).setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return JSON.parse(Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]).toString('utf8')) as JWK;
  } catch {
    throw new KeyEncryptionError('a sealed signing key failed authentication: it was altered or moved to another row');
  }
}

/** The file the embedded default keeps its generated KEK in. */
export function kekFile(dataDir: string): string {
  return join(dataDir, 'key-encryption-key');
}

/**
 * The KEK a starting process uses: `KEY_ENCRYPTION_KEY` (or `_FILE`) when the operator set one.
 * Otherwise the one in `${DATA_DIR}/key-encryption-key`, generated there on first start (mode 0600,
 * created exclusively, so processes starting together agree on one) — on the embedded database, and
 * in a PostgreSQL sandbox. Production on PostgreSQL must be given one: its processes may run on
 * several machines, and a key generated on one could not open what another sealed.
 */
export async function resolveKeyEncryption(config: Config): Promise<KeyEncryption> {
  const given = keyEncryptionOf(config);
  if (given) return given;
  if (config.databaseUrl && config.appEnv === 'production') {
    throw new ConfigError('KEY_ENCRYPTION_KEY (or KEY_ENCRYPTION_KEY_FILE) must be set in production on PostgreSQL: it encrypts the token-signing keys at rest');
  }
  const file = kekFile(config.dataDir);
  await mkdir(config.dataDir, { recursive: true });
  try {
    await writeFile(file, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  await chmod(file, 0o600);
  const current = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
  if (current.length !== 32) throw new ConfigError(`${file} must hold 32 random bytes in base64`);
  return { current, ...(config.keyEncryptionKeyPrevious ? { previous: config.keyEncryptionKeyPrevious } : {}) };
}

/** The configuration's KEKs, when it has them (tests and embedders pass `KEY_ENCRYPTION_KEY`; `serve` resolves one first). */
export function keyEncryptionOf(config: Config): KeyEncryption | undefined {
  if (!config.keyEncryptionKey) return undefined;
  return { current: config.keyEncryptionKey, ...(config.keyEncryptionKeyPrevious ? { previous: config.keyEncryptionKeyPrevious } : {}) };
}

/** `config` with its KEK resolved ({@link resolveKeyEncryption}): what `serve` and the operator's key commands run with. */
export async function withKeyEncryption(config: Config): Promise<Config> {
  const keys = await resolveKeyEncryption(config);
  return { ...config, keyEncryptionKey: keys.current, keyEncryptionKeyPrevious: keys.previous };
}
