import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { principalOf } from '../../src/http/auth-guard.js';
import { testApp, newDeveloper, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';

describe('client credentials grant and the API guard', () => {
  let t: TestApp;
  let dev: NewDeveloper;
  beforeAll(async () => {
    t = await testApp();
    // A probe route behind the guard, to observe what the guard admits.
    t.app.get('/v1/_probe', { onRequest: t.app.guard({ scope: 'external.appointment.read' }) }, async (req) => {
      const p = principalOf(req);
      return { kind: p.kind, developer: p.developerId };
    });
    dev = await newDeveloper(t);
  });
  afterAll(async () => t.close());

  const token = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/auth/oauth/token', payload, headers });

  it('issues a signed JWT with every client scope, accepted by the API', async () => {
    const res = await token({ grant_type: 'client_credentials', client_id: dev.client_id, client_secret: dev.client_secret, audience: t.config.audience });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(3600);
    expect(body.scope.split(' ')).toContain('external.calendar.write');
    expect(decodeProtectedHeader(body.access_token).alg).toBe('ES256');
    const claims = decodeJwt(body.access_token);
    expect(claims.aud).toBe(t.config.audience);
    expect(claims.iss).toBe(t.config.authUrl);
    const probe = await t.app.inject({ url: '/v1/_probe', headers: bearer(body.access_token) });
    expect(probe.json()).toEqual({ kind: 'client', developer: dev.developer_id });
  });

  it('accepts form-encoded bodies and HTTP Basic client authentication', async () => {
    const basic = Buffer.from(`${dev.client_id}:${dev.client_secret}`).toString('base64');
    const res = await t.app.inject({
      method: 'POST',
      url: '/auth/oauth/token',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'client_credentials', audience: t.config.audience }).toString(),
    });
    expect(res.statusCode).toBe(200);
  });

  it('refuses a wrong secret with invalid_client 401 and WWW-Authenticate', async () => {
    const res = await token({ grant_type: 'client_credentials', client_id: dev.client_id, client_secret: 'nope', audience: t.config.audience });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic/);
    expect(res.json()).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
    const unknown = await token({ grant_type: 'client_credentials', client_id: 'cl_nobody', client_secret: 'x', audience: t.config.audience });
    expect(unknown.statusCode).toBe(401);
  });

  it('answers bad percent-encoding in HTTP Basic credentials with invalid_client 401, not a 500 (RFC 6749 §5.2)', async () => {
    for (const pair of [`${dev.client_id}:%E0%A4%A`, `%zz:${dev.client_secret}`]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/auth/oauth/token',
        headers: { authorization: `Basic ${Buffer.from(pair).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ grant_type: 'client_credentials', audience: t.config.audience }).toString(),
      });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic/);
      expect(res.json()).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
    }
  });

  it('answers an unsupported content type with 400 invalid_request (docs/api/errors.md#errors-of-the-authorization-server)', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/auth/oauth/token', headers: { 'content-type': 'text/csv' }, payload: 'a,b' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });

  it('refuses a wrong audience, an unknown grant and a scope the client does not hold', async () => {
    const base = { grant_type: 'client_credentials', client_id: dev.client_id, client_secret: dev.client_secret };
    expect((await token({ ...base, audience: 'https://elsewhere.example/' })).json().error).toBe('invalid_request');
    expect((await token({ ...base })).json().error).toBe('invalid_request');
    expect((await token({ ...base, grant_type: 'password', audience: t.config.audience })).json().error).toBe('unsupported_grant_type');
    const bad = await token({ ...base, audience: t.config.audience, scope: 'offline_access' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('invalid_scope');
  });

  it('narrows scopes on request; the guard answers 403 insufficient_scope without the scope', async () => {
    const narrow = await clientToken(t, dev, 'external.calendar.read');
    const res = await t.app.inject({ url: '/v1/_probe', headers: bearer(narrow) });
    expect(res.statusCode).toBe(403);
    expect(res.headers['www-authenticate']).toContain('error="insufficient_scope"');
    expect(res.json().request_id).toBe(res.headers['x-request-id']);
  });

  it('answers 401 invalid_token for a malformed or tampered token, and a bare Bearer challenge without any token', async () => {
    const good = await clientToken(t, dev);
    const [h, p, s] = good.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, dev: 'dv_other' })).toString('base64url')}.${s}`;
    for (const headers of [{ authorization: 'Bearer' }, { authorization: 'Bearer a b' }, bearer('not.a.jwt'), bearer(tampered)]) {
      const res = await t.app.inject({ url: '/v1/_probe', headers });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
      expect(res.json()).toMatchObject({ error_type: 'invalid_request', request_id: res.headers['x-request-id'] });
    }
    // Without any bearer credentials: no error code (RFC 6750 §3.1).
    for (const headers of [{}, { authorization: 'Basic abc' }]) {
      const res = await t.app.inject({ url: '/v1/_probe', headers });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="carebook"');
      expect(res.json()).toMatchObject({ error_type: 'invalid_request', request_id: res.headers['x-request-id'] });
    }
  });

  it('publishes the JWKS and RFC 8414 metadata', async () => {
    const jwks = (await t.app.inject({ url: '/auth/.well-known/jwks.json' })).json();
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(jwks.keys[0].d).toBeUndefined();
    const meta = (await t.app.inject({ url: '/auth/.well-known/oauth-authorization-server' })).json();
    expect(meta.token_endpoint).toBe(`${t.config.authUrl}/oauth/token`);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
  });
});
