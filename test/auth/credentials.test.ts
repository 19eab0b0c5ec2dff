/** `POST /v1/token/anonymous-user` and `POST /v1/credentials/rotate` (docs/api/auth.md). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { anonymousToken, bearer, clientToken, userToken } from '../helpers/auth.js';

describe('credential operations', () => {
  let t: TestApp;
  let dev: NewDeveloper;
  let other: NewDeveloper;
  beforeAll(async () => {
    t = await testApp();
    dev = await newDeveloper(t, 'Mine');
    other = await newDeveloper(t, 'Theirs');
  });
  afterAll(async () => t.close());

  const anon = (token: string, body: unknown) => t.app.inject({ method: 'POST', url: '/v1/token/anonymous-user', headers: bearer(token), payload: body as object });
  const rotate = (token: string, body: unknown) => t.app.inject({ method: 'POST', url: '/v1/credentials/rotate', headers: bearer(token), payload: body as object });

  it('issues an anonymous token for a client of the caller developer', async () => {
    const machine = await clientToken(t, dev);
    const res = await anon(machine, { app_client_id: dev.user_client_id });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({ request_id: res.headers['x-request-id'], data: { access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 } });
    const claims = decodeJwt(body.data.access_token);
    expect(claims).toMatchObject({ knd: 'anonymous', dev: dev.developer_id, client_id: dev.user_client_id, scope: '', aud: t.config.audience });
    expect(claims.sub).toMatch(/^an_/);
    // Each call is a new anonymous end user.
    const second = (await anon(machine, { app_client_id: dev.user_client_id })).json();
    expect(decodeJwt(second.data.access_token).sub).not.toBe(claims.sub);
  });

  it("refuses another developer's client, a missing body field, a missing scope, and non-machine callers", async () => {
    const machine = await clientToken(t, dev);
    const foreign = await anon(machine, { app_client_id: other.user_client_id });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json()).toMatchObject({ error_type: 'invalid_request', errors: [{ field: 'app_client_id' }] });
    const missing = await anon(machine, {});
    expect(missing.statusCode).toBe(400);
    expect(missing.json().errors[0].field).toMatch(/app_client_id/);
    const narrow = await clientToken(t, dev, 'external.appointment.read');
    const noScope = await anon(narrow, { app_client_id: dev.user_client_id });
    expect(noScope.statusCode).toBe(403);
    expect(noScope.headers['www-authenticate']).toContain('insufficient_scope');
    expect((await anon(await anonymousToken(t, dev), { app_client_id: dev.user_client_id })).statusCode).toBe(403);
    const user = await userToken(t, dev, { email: 'cred@example.com', password: 'cred-password-1' });
    expect((await anon(user, { app_client_id: dev.user_client_id })).statusCode).toBe(403);
    const none = await t.app.inject({ method: 'POST', url: '/v1/token/anonymous-user', payload: { app_client_id: dev.user_client_id } });
    expect(none.statusCode).toBe(401);
    // No token at all: a challenge without an error code (RFC 6750 §3.1).
    expect(none.headers['www-authenticate']).toBe('Bearer realm="carebook"');
  });

  it('rotates a client secret: the new one works, the old one stops working at once', async () => {
    const d = await newDeveloper(t, 'Rotating');
    const machine = await clientToken(t, d);
    const res = await rotate(machine, { application_client_id: d.client_id });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({ request_id: res.headers['x-request-id'], data: { application_client_id: d.client_id, client_secret: expect.any(String) } });
    expect(body.data.client_secret).not.toBe(d.client_secret);
    await expect(clientToken(t, d)).rejects.toThrow(/401/);
    expect(await clientToken(t, { ...d, client_secret: body.data.client_secret })).toEqual(expect.any(String));
    const row = await t.db.selectFrom('oauth_clients').select(['secret_hash', 'secret_rotated_at']).where('client_id', '=', d.client_id).executeTakeFirstOrThrow();
    expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.secret_hash).not.toContain(body.data.client_secret);
    expect(row.secret_rotated_at).toBeInstanceOf(Date);
  });

  it("refuses to rotate public clients, other developers' clients, and without the scope", async () => {
    const machine = await clientToken(t, dev);
    for (const id of [dev.user_client_id, other.client_id, 'cl_unknown']) {
      const res = await rotate(machine, { application_client_id: id });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors[0].field).toBe('application_client_id');
    }
    const narrow = await clientToken(t, dev, 'external.appointment.read');
    expect((await rotate(narrow, { application_client_id: dev.client_id })).statusCode).toBe(403);
    // Nothing changed for the refused ones.
    expect(await clientToken(t, other)).toEqual(expect.any(String));
  });
});
