import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { principalOf } from '../../src/http/auth-guard.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { anonymousToken, bearer, userToken, userTokenResponse } from '../helpers/auth.js';

describe('token helpers for other tests', () => {
  let t: TestApp;
  let dev: NewDeveloper;
  beforeAll(async () => {
    t = await testApp();
    t.app.get('/v1/_whoami', { onRequest: t.app.guard({ allowAnonymous: true }) }, async (req) => {
      const p = principalOf(req);
      return { kind: p.kind, developer: p.developerId, scopes: [...p.scopes].sort(), user: p.kind === 'user' ? p.userId : null };
    });
    dev = await newDeveloper(t);
  });
  afterAll(async () => t.close());

  it('userToken signs in through the forms and exchanges the code with PKCE', async () => {
    const token = await userToken(t, dev, { email: 'pat@example.com', password: 'correct horse battery' });
    const res = await t.app.inject({ url: '/v1/_whoami', headers: bearer(token) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ kind: 'user', developer: dev.developer_id, scopes: ['external.appointment.read', 'external.appointment.write', 'external.schedulable_entity.read'] });
    // The same login again (the user exists now) works too.
    const again = await userToken(t, dev, { email: 'pat@example.com', password: 'correct horse battery', scope: 'external.appointment.read' });
    expect(decodeJwt(again).scope).toBe('external.appointment.read');
    const full = await userTokenResponse(t, dev, { email: 'pat@example.com', password: 'correct horse battery', scope: 'external.appointment.read offline_access' });
    expect(full.refresh_token).toEqual(expect.any(String));
  });

  it('anonymousToken gets an anonymous token from /v1/token/anonymous-user', async () => {
    const token = await anonymousToken(t, dev);
    const res = await t.app.inject({ url: '/v1/_whoami', headers: bearer(token) });
    expect(res.json()).toMatchObject({ kind: 'anonymous', developer: dev.developer_id, scopes: [] });
  });
});
