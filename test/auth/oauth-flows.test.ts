/**
 * All three grants through a real OAuth client library (oauth4webapi) against the running server
 * over HTTP: client credentials, authorization code with PKCE S256, refresh token rotation; plus
 * code replay, redirect URI and verifier mismatches, refresh reuse and lifetimes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oauth from 'oauth4webapi';
import { decodeJwt } from 'jose';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { createUser } from '../../src/domain/users/create-user.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { anonymousToken, hiddenField } from '../helpers/auth.js';

const REDIRECT = 'http://127.0.0.1:9/callback';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

describe('OAuth flows with oauth4webapi over HTTP', () => {
  let t: TestApp;
  let base: string;
  let as: oauth.AuthorizationServer;
  let dev: NewDeveloper;
  let userClient: oauth.Client;

  beforeAll(async () => {
    t = await testApp();
    t.app.get('/v1/_probe', { onRequest: t.app.guard({ scope: 'external.appointment.read' }) }, async () => ({ ok: true }));
    base = await t.listen();
    dev = await newDeveloper(t, 'Flow test app', [REDIRECT, 'http://127.0.0.1:9/other']);
    userClient = { client_id: dev.user_client_id };
    await createUser(t.db, { env: 'sandbox', email: 'flow@example.com', password: 'flow-password-1', role: 'patient' });
    // RFC 8414 metadata at {auth_url}/.well-known/oauth-authorization-server (docs/api/auth.md#keys-and-metadata).
    const issuer = new URL(t.config.authUrl);
    as = await oauth.processDiscoveryResponse(issuer, await fetch(`${t.config.authUrl}/.well-known/oauth-authorization-server`));
  });
  afterAll(async () => t.close());

  const api = (token: string) => fetch(`${base}/v1/_probe`, { headers: { authorization: `Bearer ${token}` } });

  /** Plays the browser with fetch: authorize → sign in → allow; returns the callback URL. */
  async function browse(params: Record<string, string>, opts: { email?: string; password?: string; decision?: 'allow' | 'deny' } = {}): Promise<URL> {
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const page = await fetch(url, { redirect: 'manual' });
    if (page.status === 303) return new URL(page.headers.get('location')!);
    expect(page.status).toBe(200);
    const cookies = new Map<string, string>();
    const keep = (res: Response) => {
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const i = pair!.indexOf('=');
        cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
      }
    };
    keep(page);
    const html = await page.text();
    const form = { request: hiddenField(html, 'request'), csrf_token: hiddenField(html, 'csrf_token') };
    const post = (path: string, body: Record<string, string>) =>
      fetch(`${t.config.authUrl}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '), origin: new URL(base).origin },
        body: new URLSearchParams(body),
      });
    const signIn = await post('/authorize/signin', { ...form, email: opts.email ?? 'flow@example.com', password: opts.password ?? 'flow-password-1' });
    expect(signIn.status).toBe(303);
    keep(signIn);
    const decided = await post('/authorize/decision', { ...form, decision: opts.decision ?? 'allow' });
    expect(decided.status).toBe(303);
    return new URL(decided.headers.get('location')!);
  }

  async function codeFlow(scope: string, extra: Record<string, string> = {}) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const callback = await browse({
      response_type: 'code',
      client_id: userClient.client_id,
      redirect_uri: REDIRECT,
      scope,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      audience: 'DeveloperApiPatient-Sandbox',
      ...extra,
    });
    const params = oauth.validateAuthResponse(as, userClient, callback, state);
    return { verifier, params, callback };
  }

  const exchange = (params: URLSearchParams, verifier: string, redirectUri = REDIRECT) =>
    oauth.authorizationCodeGrantRequest(as, userClient, oauth.None(), params, redirectUri, verifier, insecure);

  it('client credentials: token with the audience, accepted by the API', async () => {
    const machine: oauth.Client = { client_id: dev.client_id };
    const res = await oauth.clientCredentialsGrantRequest(as, machine, oauth.ClientSecretBasic(dev.client_secret), { audience: t.config.audience, scope: 'external.appointment.read' }, insecure);
    const body = await oauth.processClientCredentialsResponse(as, machine, res);
    expect(body).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'external.appointment.read' });
    expect((await api(body.access_token)).status).toBe(200);
    const post = await oauth.clientCredentialsGrantRequest(as, machine, oauth.ClientSecretPost(dev.client_secret), { audience: t.config.audience }, insecure);
    expect((await oauth.processClientCredentialsResponse(as, machine, post)).access_token).toEqual(expect.any(String));
    const bad = await oauth.clientCredentialsGrantRequest(as, machine, oauth.ClientSecretPost('wrong'), { audience: t.config.audience }, insecure);
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect(await bad.clone().json()).toMatchObject({ error: 'invalid_client', error_description: expect.any(String) });
    await expect(oauth.processClientCredentialsResponse(as, machine, bad)).rejects.toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
  });

  it('authorization code + PKCE: callback carries code, state and iss; the exchange gives a user token without refresh token', async () => {
    const { verifier, params, callback } = await codeFlow('external.appointment.read external.appointment.write');
    expect(callback.searchParams.get('iss')).toBe(t.config.authUrl);
    const body = await oauth.processAuthorizationCodeResponse(as, userClient, await exchange(params, verifier));
    expect(body).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'external.appointment.read external.appointment.write' });
    expect(body.refresh_token).toBeUndefined();
    const claims = decodeJwt(body.access_token);
    expect(claims).toMatchObject({ knd: 'user', role: 'patient', dev: dev.developer_id, client_id: dev.user_client_id, aud: t.config.audience, iss: t.config.authUrl });
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect((await api(body.access_token)).status).toBe(200);
  });

  it('a reused code is refused and revokes the tokens it issued', async () => {
    const { verifier, params } = await codeFlow('external.appointment.read offline_access');
    const first = await oauth.processAuthorizationCodeResponse(as, userClient, await exchange(params, verifier));
    expect((await api(first.access_token)).status).toBe(200);
    const replay = await exchange(params, verifier);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
    const after = await api(first.access_token);
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    const refresh = await oauth.refreshTokenGrantRequest(as, userClient, oauth.None(), first.refresh_token!, insecure);
    expect(refresh.status).toBe(400);
    expect((await refresh.json()).error).toBe('invalid_grant');
  });

  it('the code is bound to the redirect URI, the verifier and the client', async () => {
    const a = await codeFlow('external.appointment.read');
    const wrongUri = await exchange(a.params, a.verifier, 'http://127.0.0.1:9/other');
    expect(wrongUri.status).toBe(400);
    expect((await wrongUri.json()).error).toBe('invalid_grant');

    const b = await codeFlow('external.appointment.read');
    const wrongVerifier = await exchange(b.params, oauth.generateRandomCodeVerifier());
    expect(wrongVerifier.status).toBe(400);
    expect(await wrongVerifier.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('code_verifier') });

    // "plain": the challenge itself as verifier does not pass S256.
    const c = await codeFlow('external.appointment.read');
    const challenge = await oauth.calculatePKCECodeChallenge(c.verifier);
    const plain = await exchange(c.params, challenge);
    expect((await plain.json()).error).toBe('invalid_grant');

    const d = await codeFlow('external.appointment.read');
    const missing = await fetch(as.token_endpoint!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', client_id: dev.user_client_id, code: d.params.get('code'), redirect_uri: REDIRECT }),
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('code_verifier') });
    // Refused without a verifier, the code itself still works with it.
    expect((await exchange(d.params, d.verifier)).status).toBe(200);

    const other = await newDeveloper(t, 'Other app', [REDIRECT]);
    const e = await codeFlow('external.appointment.read');
    const stolen = await oauth.authorizationCodeGrantRequest(as, { client_id: other.user_client_id }, oauth.None(), e.params, REDIRECT, e.verifier, insecure);
    expect((await stolen.json()).error).toBe('invalid_grant');
    // The rightful client can still use it: a foreign client does not burn the code.
    expect((await exchange(e.params, e.verifier)).status).toBe(200);
  });

  it('codes expire after 60 seconds', async () => {
    const { verifier, params } = await codeFlow('external.appointment.read');
    const row = await t.db.selectFrom('authorization_codes').select(['expires_at']).orderBy('expires_at', 'desc').executeTakeFirstOrThrow();
    expect(Math.round((row.expires_at.getTime() - Date.now()) / 1000)).toBeGreaterThan(50);
    expect(Math.round((row.expires_at.getTime() - Date.now()) / 1000)).toBeLessThanOrEqual(60);
    await t.db.updateTable('authorization_codes').set({ expires_at: new Date(Date.now() - 1000) }).where('used_at', 'is', null).execute();
    const res = await exchange(params, verifier);
    expect(await res.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('expired') });
  });

  it('refresh: only with offline_access; rotated on every use; reuse revokes the family', async () => {
    const { verifier, params } = await codeFlow('external.appointment.read external.appointment.write offline_access');
    const first = await oauth.processAuthorizationCodeResponse(as, userClient, await exchange(params, verifier));
    expect(first.refresh_token).toEqual(expect.any(String));
    const fid = decodeJwt(first.access_token).fid as string;

    const r1 = await oauth.processRefreshTokenResponse(as, userClient, await oauth.refreshTokenGrantRequest(as, userClient, oauth.None(), first.refresh_token!, insecure));
    expect(r1.refresh_token).not.toBe(first.refresh_token);
    expect(decodeJwt(r1.access_token).fid).toBe(fid);
    expect((await api(r1.access_token)).status).toBe(200);

    // Narrowing on refresh (RFC 6749 §6); the family keeps its scopes.
    const narrow = await oauth.processRefreshTokenResponse(
      as, userClient,
      await oauth.refreshTokenGrantRequest(as, userClient, oauth.None(), r1.refresh_token!, { ...insecure, additionalParameters: { scope: 'external.appointment.read' } }),
    );
    expect(narrow.scope).toBe('external.appointment.read');
    const wider = await oauth.refreshTokenGrantRequest(as, userClient, oauth.None(), narrow.refresh_token!, { ...insecure, additionalParameters: { scope: 'external.calendar.write' } });
    expect((await wider.json()).error).toBe('invalid_scope');

    // Reuse of an already rotated refresh token: the family is revoked, everything stops working.
    const reuse = await oauth.refreshTokenGrantRequest(as, userClient, oauth.None(), first.refresh_token!, insecure);
    expect(reuse.status).toBe(400);
    expect(await reuse.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('revoked') });
    const latest = await oauth.refreshTokenGrantRequest(as, userClient, oauth.None(), narrow.refresh_token!, insecure);
    expect((await latest.json()).error).toBe('invalid_grant');
    expect((await api(narrow.access_token)).status).toBe(401);
    expect((await api(first.access_token)).status).toBe(401);
  });

  it('refresh lifetimes: 15 days idle, 30 days at most', async () => {
    const { verifier, params } = await codeFlow('external.appointment.read offline_access');
    const first = await oauth.processAuthorizationCodeResponse(as, userClient, await exchange(params, verifier));
    const fid = decodeJwt(first.access_token).fid as string;
    const fam = await t.db.selectFrom('token_families').select(['absolute_expires_at', 'created_at']).where('id', '=', fid).executeTakeFirstOrThrow();
    const days = (d: Date, from = Date.now()) => (d.getTime() - from) / 86_400_000;
    expect(days(fam.absolute_expires_at)).toBeCloseTo(30, 2);
    const rt = await t.db.selectFrom('refresh_tokens').select(['idle_expires_at']).where('family_id', '=', fid).executeTakeFirstOrThrow();
    expect(days(rt.idle_expires_at)).toBeCloseTo(15, 2);

    // Idle expiry.
    await t.db.updateTable('refresh_tokens').set({ idle_expires_at: new Date(Date.now() - 1000) }).where('family_id', '=', fid).execute();
    const idle = await oauth.refreshTokenGrantRequest(as, userClient, oauth.None(), first.refresh_token!, insecure);
    expect(await idle.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('expired') });

    // Absolute expiry, and a rotated token never outlives the family.
    const second = await codeFlow('external.appointment.read offline_access');
    const tok = await oauth.processAuthorizationCodeResponse(as, userClient, await exchange(second.params, second.verifier));
    const fid2 = decodeJwt(tok.access_token).fid as string;
    const soon = new Date(Date.now() + 3 * 86_400_000);
    await t.db.updateTable('token_families').set({ absolute_expires_at: soon }).where('id', '=', fid2).execute();
    const rotated = await oauth.processRefreshTokenResponse(as, userClient, await oauth.refreshTokenGrantRequest(as, userClient, oauth.None(), tok.refresh_token!, insecure));
    const rows = await t.db.selectFrom('refresh_tokens').select(['idle_expires_at', 'used_at']).where('family_id', '=', fid2).where('used_at', 'is', null).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.idle_expires_at.getTime()).toBe(soon.getTime());
    await t.db.updateTable('token_families').set({ absolute_expires_at: new Date(Date.now() - 1000) }).where('id', '=', fid2).execute();
    const past = await oauth.refreshTokenGrantRequest(as, userClient, oauth.None(), rotated.refresh_token!, insecure);
    expect((await past.json()).error).toBe('invalid_grant');
  });

  it('a refresh token is bound to its client', async () => {
    const { verifier, params } = await codeFlow('external.appointment.read offline_access');
    const first = await oauth.processAuthorizationCodeResponse(as, userClient, await exchange(params, verifier));
    const other = await newDeveloper(t, 'Other app 2', [REDIRECT]);
    const res = await oauth.refreshTokenGrantRequest(as, { client_id: other.user_client_id }, oauth.None(), first.refresh_token!, insecure);
    expect((await res.json()).error).toBe('invalid_grant');
    expect((await oauth.refreshTokenGrantRequest(as, userClient, oauth.None(), first.refresh_token!, insecure)).status).toBe(200);
  });

  it('an anonymous session is linked to the user who signs in with its anonymous_token', async () => {
    const anon = await anonymousToken(t, dev);
    const { verifier, params } = await codeFlow('external.appointment.read', { anonymous_token: anon });
    const body = await oauth.processAuthorizationCodeResponse(as, userClient, await exchange(params, verifier));
    const claims = decodeJwt(body.access_token);
    expect(claims.anon).toBe(decodeJwt(anon).sub);
    const fam = await t.db.selectFrom('token_families').select('anonymous_subject').where('id', '=', claims.fid as string).executeTakeFirstOrThrow();
    expect(fam.anonymous_subject).toBe(decodeJwt(anon).sub);
  });

  it('denial and bad requests come back to the client as error and error_description', async () => {
    const state = oauth.generateRandomState();
    const verifier = oauth.generateRandomCodeVerifier();
    const challenge = await oauth.calculatePKCECodeChallenge(verifier);
    const denied = await browse({ response_type: 'code', client_id: dev.user_client_id, redirect_uri: REDIRECT, scope: 'external.appointment.read', code_challenge: challenge, code_challenge_method: 'S256', state }, { decision: 'deny' });
    expect(() => oauth.validateAuthResponse(as, userClient, denied, state)).toThrow(oauth.AuthorizationResponseError);
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('state')).toBe(state);

    const plain = await browse({ response_type: 'code', client_id: dev.user_client_id, redirect_uri: REDIRECT, code_challenge: verifier, code_challenge_method: 'plain', state });
    expect(plain.searchParams.get('error')).toBe('invalid_request');
    expect(plain.searchParams.get('error_description')).toMatch(/S256/);
    expect(plain.searchParams.get('state')).toBe(state);
  });
});
