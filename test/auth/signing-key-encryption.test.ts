/**
 * Token-signing keys are encrypted at rest under the operator's key-encryption key (KEK;
 * docs/operator-guide.md, "The key-encryption key"): no private key material in the database, a
 * database without its KEK cannot sign, keys stored in clear by an older version are sealed at
 * start, and a KEK rotation (`carebook keys rewrap`) re-seals every key.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, jwtVerify, createLocalJWKSet, decodeProtectedHeader } from 'jose';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSealed, kekFile, openJwk, resolveKeyEncryption, signingKeyAad, type SealedJwk } from '../../src/auth/key-encryption.js';
import { KeyStore } from '../../src/auth/signing-keys.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { startService } from '../../src/server.js';
import { newDeveloper, TEST_KEY_ENCRYPTION_KEY, testApp, testPort, type TestApp } from '../helpers/app.js';
import { clientToken } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';

const kek = (): Buffer => randomBytes(32);
const TEST_KEK = Buffer.from(TEST_KEY_ENCRYPTION_KEY, 'base64');

describe(`signing keys encrypted at rest (${engineName})`, () => {
  let t: TestApp;
  let dev: NewDeveloper;
  beforeAll(async () => {
    t = await testApp();
    dev = await newDeveloper(t, 'Sealed');
  });
  afterAll(async () => t.close());

  /** Every signing_keys row as text, to search for key material. */
  const rowsText = async () => (await sql<{ t: string }>`SELECT row_to_json(k)::text AS t FROM signing_keys k`.execute(t.db)).rows.map((r) => r.t).join('\n');

  it('stores no private key material in clear', async () => {
    const token = await clientToken(t, dev);
    const kid = decodeProtectedHeader(token).kid!;
    const row = await t.db.selectFrom('signing_keys').select(['private_jwk']).where('kid', '=', kid).executeTakeFirstOrThrow();
    expect(isSealed(row.private_jwk)).toBe(true);
    const jwk = openJwk(row.private_jwk as SealedJwk, { current: TEST_KEK }, signingKeyAad('sandbox', kid));
    expect(jwk.d).toEqual(expect.any(String));
    expect(await rowsText()).not.toContain(jwk.d!);
    expect(await rowsText()).not.toMatch(/"d"\s*:/);
  });

  it('a sealed key cannot be opened for another row', async () => {
    const row = await t.db.selectFrom('signing_keys').select(['kid', 'private_jwk']).executeTakeFirstOrThrow();
    expect(() => openJwk(row.private_jwk as SealedJwk, { current: TEST_KEK }, signingKeyAad('production', row.kid))).toThrow(/failed authentication/);
  });

  it('refuses to start, and cannot sign, with another key-encryption key', async () => {
    const wrong = loadConfig({ PORT: String(testPort()), LOG_LEVEL: 'silent', KEY_ENCRYPTION_KEY: kek().toString('base64') });
    await expect(startService(wrong, { handle: t.handle, quiet: true, workers: false })).rejects.toThrow(/key-encryption key/);
    await expect(new KeyStore(t.db, 'sandbox', { current: kek() }).signingKey()).rejects.toThrow(/not configured/);
    await expect(new KeyStore(t.db, 'sandbox').signingKey()).rejects.toThrow(/no key-encryption key/);
  });

  it('seals a key an older version stored in clear, and keeps signing with it', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = 'key_legacy01';
    await t.db.updateTable('signing_keys').set({ retired_at: new Date() }).where('env', '=', 'sandbox').where('retired_at', 'is', null).execute();
    await t.db
      .insertInto('signing_keys')
      .values({ kid, env: 'sandbox', alg: 'ES256', private_jwk: { ...(await exportJWK(privateKey)), kid, alg: 'ES256' }, public_jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } })
      .execute();
    expect(await rowsText()).toMatch(/"d"\s*:/);
    const service = await startService(loadConfig({ PORT: String(testPort()), LOG_LEVEL: 'silent', KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY }), { handle: t.handle, quiet: true, workers: false });
    try {
      expect(await rowsText()).not.toMatch(/"d"\s*:/);
      const res = await fetch(`${service.url}/auth/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', client_id: dev.client_id, client_secret: dev.client_secret, audience: `${service.url}/` }),
      });
      const token = ((await res.json()) as { access_token: string }).access_token;
      expect(decodeProtectedHeader(token).kid).toBe(kid);
      const jwks = (await (await fetch(`${service.url}/auth/.well-known/jwks.json`)).json()) as { keys: never[] };
      await jwtVerify(token, createLocalJWKSet(jwks));
    } finally {
      await service.close();
    }
  });

  it('rewraps every key under a new key-encryption key; the old one then opens nothing', async () => {
    const fresh = kek();
    expect(await new KeyStore(t.db, 'sandbox', { current: fresh, previous: TEST_KEK }).rewrap()).toBeGreaterThan(1);
    await expect(new KeyStore(t.db, 'sandbox', { current: TEST_KEK }).signingKey()).rejects.toThrow(/not configured/);
    const rotated = new KeyStore(t.db, 'sandbox', { current: fresh });
    expect((await rotated.signingKey()).kid).toBe('key_legacy01');
    const rows = await t.db.selectFrom('signing_keys').select(['kid', 'private_jwk']).execute();
    for (const r of rows) expect(() => openJwk(r.private_jwk as SealedJwk, { current: fresh }, signingKeyAad('sandbox', r.kid))).not.toThrow();
    // Back to the test key, so that the app of this file keeps signing.
    await new KeyStore(t.db, 'sandbox', { current: TEST_KEK, previous: fresh }).rewrap();
  });
});

describe('where the key-encryption key comes from', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'carebook-kek-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('the embedded default generates one into DATA_DIR, readable by its owner only, and reuses it', async () => {
    const config = loadConfig({ DATA_DIR: dir });
    const first = await resolveKeyEncryption(config);
    expect(first.current).toHaveLength(32);
    expect((await stat(kekFile(dir))).mode & 0o777).toBe(0o600);
    expect((await resolveKeyEncryption(config)).current.equals(first.current)).toBe(true);
    expect(Buffer.from((await readFile(kekFile(dir), 'utf8')).trim(), 'base64').equals(first.current)).toBe(true);
  });

  it('takes KEY_ENCRYPTION_KEY or KEY_ENCRYPTION_KEY_FILE, and production on PostgreSQL must be given one', async () => {
    const key = kek();
    expect((await resolveKeyEncryption(loadConfig({ DATA_DIR: dir, KEY_ENCRYPTION_KEY: key.toString('base64') }))).current.equals(key)).toBe(true);
    expect(loadConfig({ KEY_ENCRYPTION_KEY_FILE: kekFile(dir) }).keyEncryptionKey).toHaveLength(32);
    expect(() => loadConfig({ KEY_ENCRYPTION_KEY: 'c2hvcnQ=' })).toThrow(ConfigError);
    expect(() => loadConfig({ KEY_ENCRYPTION_KEY_FILE: join(dir, 'missing') })).toThrow(/KEY_ENCRYPTION_KEY_FILE/);
    await expect(resolveKeyEncryption(loadConfig({ APP_ENV: 'production', DATABASE_URL: 'postgres://x@127.0.0.1/none', DATA_DIR: dir }))).rejects.toThrow(/KEY_ENCRYPTION_KEY/);
  });
});
