/**
 * The API's token checks (docs/api/auth.md#authentication-errors, RFC 6750 §3.1, RFC 8725): every forged, expired,
 * misdirected or revoked token is a 401 with `WWW-Authenticate: Bearer error="invalid_token"`.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, decodeProtectedHeader, exportSPKI, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { FastifyInstance } from 'fastify';
import { keyEncryptionOf as kekOf, openJwk, signingKeyAad, type SealedJwk } from '../../src/auth/key-encryption.js';
import { loadConfig } from '../../src/config.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { createDeveloper } from '../../src/domain/developers/create-developer.js';
import { buildApp } from '../../src/http/app.js';
import { principalOf } from '../../src/http/auth-guard.js';
import { newDeveloper, TEST_KEY_ENCRYPTION_KEY, testApp, testPort, type TestApp } from '../helpers/app.js';
import { anonymousToken, bearer, clientToken, userTokenResponse } from '../helpers/auth.js';

function probe(app: FastifyInstance): void {
  app.get('/v1/_probe', { onRequest: app.guard({ scope: 'external.appointment.read' }) }, async (req) => ({ kind: principalOf(req).kind }));
  app.get('/v1/_directory_probe', { onRequest: app.guard({ allowAnonymous: true }) }, async (req) => ({ kind: principalOf(req).kind }));
}

describe('API token checks', () => {
  let t: TestApp;
  let dev: NewDeveloper;
  let good: string;
  let privateKey: CryptoKey;
  let kid: string;
  let publicJwk: JWK;

  beforeAll(async () => {
    t = await testApp();
    probe(t.app);
    dev = await newDeveloper(t);
    good = await clientToken(t, dev);
    kid = decodeProtectedHeader(good).kid!;
    const row = await t.db.selectFrom('signing_keys').select(['private_jwk', 'public_jwk']).where('kid', '=', kid).executeTakeFirstOrThrow();
    privateKey = (await importJWK(openJwk(row.private_jwk as SealedJwk, kekOf(t.config)!, signingKeyAad('sandbox', kid)), 'ES256')) as CryptoKey;
    publicJwk = row.public_jwk as JWK;
  });
  afterAll(async () => t.close());

  /** Claims of a genuine client token, to re-sign with changes. */
  const claims = () => decodeJwt(good) as Record<string, unknown>;
  const sign = (payload: Record<string, unknown>, header: Record<string, unknown> = {}) =>
    new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt', ...header }).sign(privateKey);

  async function expectInvalid(token: string): Promise<void> {
    const res = await t.app.inject({ url: '/v1/_probe', headers: bearer(token) });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    expect(res.json()).toMatchObject({ request_id: res.headers['x-request-id'], error_type: 'invalid_request', errors: [{ message: expect.any(String) }] });
  }

  it('accepts the genuine token and a correctly re-signed copy (control)', async () => {
    expect((await t.app.inject({ url: '/v1/_probe', headers: bearer(good) })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/v1/_probe', headers: bearer(await sign(claims())) })).statusCode).toBe(200);
  });

  it('refuses alg "none"', async () => {
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    await expectInvalid(`${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(claims())}.`);
    await expectInvalid(`${b64({ alg: 'none', kid, typ: 'at+jwt' })}.${b64(claims())}.`);
  });

  it('refuses HS256 signed with the public key (algorithm confusion)', async () => {
    const pem = await exportSPKI((await importJWK(publicJwk, 'ES256')) as CryptoKey);
    for (const secret of [pem, JSON.stringify(publicJwk)]) {
      const forged = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid, typ: 'at+jwt' }).sign(new TextEncoder().encode(secret));
      await expectInvalid(forged);
    }
  });

  it('refuses a token without exp (RFC 9068 §2.2), even one correctly signed', async () => {
    const { exp: _exp, ...noExp } = claims();
    await expectInvalid(await sign(noExp));
  });

  it('refuses expired and not-yet-valid tokens', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expectInvalid(await sign({ ...claims(), iat: now - 7200, exp: now - 3600 }));
    await expectInvalid(await sign({ ...claims(), iat: now, nbf: now + 3600, exp: now + 7200 }));
  });

  it('refuses a wrong audience, a wrong issuer, a wrong typ and a missing environment claim', async () => {
    await expectInvalid(await sign({ ...claims(), aud: 'https://elsewhere.example/' }));
    await expectInvalid(await sign({ ...claims(), aud: 'DeveloperApiPatient' }));
    await expectInvalid(await sign({ ...claims(), iss: 'https://evil.example/auth' }));
    await expectInvalid(await sign(claims(), { typ: 'JWT' }));
    const { env: _env, ...noEnv } = claims();
    await expectInvalid(await sign(noEnv));
    await expectInvalid(await sign({ ...claims(), env: 'production' }));
  });

  it('refuses a tampered payload and a tampered header', async () => {
    const [h, p, s] = good.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    await expectInvalid(`${h}.${b64({ ...payload, scope: `${payload.scope} external.everything` })}.${s}`);
    await expectInvalid(`${h}.${b64({ ...payload, dev: 'dv_someone_else' })}.${s}`);
    await expectInvalid(`${b64({ alg: 'ES256', kid: 'key_unknown', typ: 'at+jwt' })}.${p}.${s}`);
    await expectInvalid(`${h}.${p}.${s!.slice(0, -4)}AAAA`);
  });

  it('refuses a token signed by a key that is not ours', async () => {
    const { generateKeyPair } = await import('jose');
    const other = await generateKeyPair('ES256');
    await expectInvalid(await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' }).sign(other.privateKey));
  });

  it('refuses user tokens of a revoked family', async () => {
    const tokens = await userTokenResponse(t, dev, { email: 'rev@example.com', password: 'password-rev-1', scope: 'external.appointment.read' });
    expect((await t.app.inject({ url: '/v1/_probe', headers: bearer(tokens.access_token) })).statusCode).toBe(200);
    const fid = decodeJwt(tokens.access_token).fid as string;
    await t.db.updateTable('token_families').set({ revoked_at: new Date() }).where('id', '=', fid).execute();
    await expectInvalid(tokens.access_token);
  });

  it('answers 403 insufficient_scope for a missing scope and for anonymous tokens outside directory reads', async () => {
    const narrow = await clientToken(t, dev, 'external.calendar.read');
    const res = await t.app.inject({ url: '/v1/_probe', headers: bearer(narrow) });
    expect(res.statusCode).toBe(403);
    expect(res.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="external.appointment.read"');
    const anon = await anonymousToken(t, dev);
    expect((await t.app.inject({ url: '/v1/_probe', headers: bearer(anon) })).statusCode).toBe(403);
    expect((await t.app.inject({ url: '/v1/_directory_probe', headers: bearer(anon) })).json()).toEqual({ kind: 'anonymous' });
  });

  it('keeps verifying tokens of a rotated key; new tokens use the new key, and the JWKS lists both', async () => {
    const before = await clientToken(t, dev);
    const { KeyStore } = await import('../../src/auth/signing-keys.js');
    const rotated = await new KeyStore(t.db, t.config.appEnv, kekOf(t.config)).rotate(); // as `carebook keys rotate` does, from another process
    // The running app picks the new key up within a minute; a fresh app at once.
    const app2 = await buildApp({ config: t.config, db: t.db });
    const after = (await app2.inject({
      method: 'POST',
      url: '/auth/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: dev.client_id, client_secret: dev.client_secret, audience: t.config.audience },
    })).json().access_token as string;
    await app2.close();
    expect(decodeProtectedHeader(after).kid).toBe(rotated.kid);
    for (const token of [before, after]) expect((await t.app.inject({ url: '/v1/_probe', headers: bearer(token) })).statusCode).toBe(200);
    const jwks = (await t.app.inject({ url: '/auth/.well-known/jwks.json' })).json() as { keys: JWK[] };
    expect(jwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([kid, rotated.kid]));
    // Once the old key has been retired longer than a token lifetime, it leaves the JWKS and its tokens stop verifying.
    await t.db.updateTable('signing_keys').set({ retired_at: new Date(Date.now() - 3 * 3600_000) }).where('kid', '=', kid).execute();
    // The same app, which verified (and cached) `before` above, refuses it once it reloads the JWKS;
    // a token with a kid it does not know makes it reload now instead of within 30 s.
    const stranger = await generateKeyPair('ES256');
    const unknownKid = await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', kid: 'key_unknown', typ: 'at+jwt' }).sign(stranger.privateKey);
    await expectInvalid(unknownKid);
    await expectInvalid(before);
    expect((await t.app.inject({ url: '/v1/_probe', headers: bearer(after) })).statusCode).toBe(200);
    const app3 = await buildApp({ config: t.config, db: t.db });
    probe(app3);
    const old = await app3.inject({ url: '/v1/_probe', headers: bearer(before) });
    expect(old.statusCode).toBe(401);
    await app3.close();
  });
});

describe("another environment's tokens", () => {
  let sandbox: TestApp;
  let production: FastifyInstance;
  let prodDev: NewDeveloper;
  let sandboxDev: NewDeveloper;
  const prodConfig = () => loadConfig({ PORT: String(testPort()), APP_ENV: 'production', LOG_LEVEL: 'silent', KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY });
  let config: ReturnType<typeof prodConfig>;

  beforeAll(async () => {
    sandbox = await testApp();
    probe(sandbox.app);
    // Production on the same database (the worst case: both key sets in one table).
    config = prodConfig();
    production = await buildApp({ config, db: sandbox.db });
    probe(production);
    sandboxDev = await newDeveloper(sandbox);
    prodDev = await createDeveloper(sandbox.db, { env: 'production', name: 'Prod developer', redirectUris: ['https://app.example/cb'] });
  });
  afterAll(async () => {
    await production?.close();
    await sandbox?.close();
  });

  const get = (app: FastifyInstance, token: string) => app.inject({ url: '/v1/_probe', headers: bearer(token) });
  const prodToken = async () =>
    (await production.inject({
      method: 'POST',
      url: '/auth/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: prodDev.client_id, client_secret: prodDev.client_secret, audience: config.audience },
    })).json().access_token as string;

  it('a sandbox token is refused by production and a production token by the sandbox', async () => {
    const s = await clientToken(sandbox, sandboxDev);
    const p = await prodToken();
    expect((await get(sandbox.app, s)).statusCode).toBe(200);
    expect((await get(production, p)).statusCode).toBe(200);
    for (const [app, token] of [[production, s], [sandbox.app, p]] as const) {
      const res = await get(app, token);
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    }
  });

  it("a token signed with the sandbox key but claiming production's audience and environment is refused by production", async () => {
    const s = await clientToken(sandbox, sandboxDev);
    const { kid } = decodeProtectedHeader(s);
    const row = await sandbox.db.selectFrom('signing_keys').select(['private_jwk', 'env']).where('kid', '=', kid!).executeTakeFirstOrThrow();
    expect(row.env).toBe('sandbox');
    const key = (await importJWK(openJwk(row.private_jwk as SealedJwk, kekOf(sandbox.config)!, signingKeyAad('sandbox', kid!)), 'ES256')) as CryptoKey;
    const forged = await new SignJWT({ ...decodeJwt(s), aud: config.audience, iss: config.authUrl, env: 'production' })
      .setProtectedHeader({ alg: 'ES256', kid: kid!, typ: 'at+jwt' })
      .sign(key);
    expect((await get(production, forged)).statusCode).toBe(401);
    // …and the same with production's key against the sandbox.
    const p = await prodToken();
    const prow = await sandbox.db.selectFrom('signing_keys').select('private_jwk').where('kid', '=', decodeProtectedHeader(p).kid!).executeTakeFirstOrThrow();
    const pkey = (await importJWK(openJwk(prow.private_jwk as SealedJwk, kekOf(sandbox.config)!, signingKeyAad('production', decodeProtectedHeader(p).kid!)), 'ES256')) as CryptoKey;
    const forged2 = await new SignJWT({ ...decodeJwt(p), aud: sandbox.config.audience, iss: sandbox.config.authUrl, env: 'sandbox' })
      .setProtectedHeader({ alg: 'ES256', kid: decodeProtectedHeader(p).kid!, typ: 'at+jwt' })
      .sign(pkey);
    expect((await get(sandbox.app, forged2)).statusCode).toBe(401);
    void createHash;
  });
});
