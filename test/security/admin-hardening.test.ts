/**
 * The operator's side hardened (issue #16 §6): production refuses a short ADMIN_TOKEN; wrong admin
 * tokens are throttled per address, counted first so that parallel guesses cannot slip past; and
 * production refuses plain-http redirect URIs except to loopback, at registration and at sign-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createDeveloper, InvalidRedirectUri } from '../../src/domain/developers/create-developer.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { engineName } from '../helpers/db.js';

const ADMIN = 'test-admin-token-0123456789abcdefgh';

describe(`admin and redirect-URI hardening (${engineName})`, () => {
  let t: TestApp;
  let prod: TestApp;
  beforeAll(async () => {
    t = await testApp();
    prod = await testApp({ APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.org' });
  });
  afterAll(async () => {
    await prod.close();
    await t.close();
  });

  it('production refuses an ADMIN_TOKEN shorter than 32 characters; the sandbox does not', () => {
    expect(() => loadConfig({ APP_ENV: 'production', ADMIN_TOKEN: 'short-token' })).toThrow(ConfigError);
    expect(() => loadConfig({ APP_ENV: 'production', ADMIN_TOKEN: 'x'.repeat(31) })).toThrow(/at least 32/);
    expect(loadConfig({ APP_ENV: 'production', ADMIN_TOKEN: 'x'.repeat(32) }).adminToken).toHaveLength(32);
    expect(loadConfig({ ADMIN_TOKEN: 'short-token' }).adminToken).toBe('short-token');
  });

  it('throttles wrong admin tokens per address, counted first: parallel guesses get 429 past the tenth', async () => {
    const guess = (token: string) => t.app.inject({ url: '/admin/v1/webhook-deliveries?developer_id=dv_x', headers: { authorization: `Bearer ${token}` } });
    const ok = await guess(ADMIN);
    expect(ok.statusCode).not.toBe(401);
    const statuses = (await Promise.all(Array.from({ length: 25 }, (_, i) => guess(`wrong-${i}`)))).map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(15);
    const blocked = await guess(ADMIN);
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(blocked.json()).toMatchObject({ error_type: 'api_error', request_id: blocked.headers['x-request-id'] });
  });

  it('a burst of right admin tokens is never throttled for being many (only wrong ones count)', async () => {
    const call = () => prod.app.inject({ url: '/admin/v1/webhook-deliveries?developer_id=dv_x', headers: { authorization: `Bearer ${ADMIN}` } });
    const statuses = (await Promise.all(Array.from({ length: 40 }, call))).map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 429 || s === 401)).toEqual([]);
    const row = await prod.db.selectFrom('auth_rate_limits').select('hits').where('bucket', 'like', 'admin:addr:%').executeTakeFirst();
    expect(row?.hits ?? 0).toBe(0);
  });

  it('production refuses plain-http redirect URIs except to loopback; the sandbox takes them', async () => {
    await expect(createDeveloper(prod.db, { env: 'production', name: 'Plain', redirectUris: ['http://app.example.com/cb'] })).rejects.toThrow(InvalidRedirectUri);
    for (const uri of ['https://app.example.com/cb', 'http://127.0.0.1:8123/cb', 'http://localhost/cb', 'http://[::1]:9/cb']) {
      await expect(createDeveloper(prod.db, { env: 'production', name: 'Fine', redirectUris: [uri] })).resolves.toMatchObject({ client_id: expect.any(String) });
    }
    await expect(createDeveloper(t.db, { env: 'sandbox', name: 'Local', redirectUris: ['http://app.example.com/cb'] })).resolves.toBeTruthy();
    const viaAdmin = await prod.app.inject({ method: 'POST', url: '/admin/v1/developers', headers: { authorization: `Bearer ${ADMIN}` }, payload: { name: 'Plain', redirect_uris: ['http://app.example.com/cb'] } });
    expect(viaAdmin.statusCode).toBe(400);
    expect(viaAdmin.json().errors[0]).toMatchObject({ message: expect.stringMatching(/https in production/) });
  });

  it('the sign-in page refuses a plain-http redirect URI stored earlier in production', async () => {
    const dev = await newDeveloper(prod, 'Old app', ['https://app.example.com/cb']);
    await prod.db.updateTable('oauth_clients').set({ redirect_uris: ['http://app.example.com/cb'] }).where('client_id', '=', dev.user_client_id).execute();
    const q = new URLSearchParams({
      response_type: 'code', client_id: dev.user_client_id, redirect_uri: 'http://app.example.com/cb', scope: 'external.appointment.read',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 's',
    });
    const res = await prod.app.inject({ url: `/auth/authorize?${q}` });
    expect(res.statusCode).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.body).toContain('not allowed in this environment');
  });
});
