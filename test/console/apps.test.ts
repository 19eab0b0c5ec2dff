/**
 * The console's apps and credentials (docs/console.md): create, list, read (secret shown once),
 * overlapping rotation, redirect URI edits, revocation, and isolation between accounts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SchedulingEnv } from '../appointments/fixtures.js';
import { authPath, authorizeWithForms, bearer, clientToken, userToken } from '../helpers/auth.js';
import { newConsoleAccount, type ConsoleLogin } from '../helpers/console.js';
import { practiceEnv } from '../helpers/practice.js';

let e: SchedulingEnv;
let a: ConsoleLogin;
let b: ConsoleLogin;
beforeAll(async () => {
  e = await practiceEnv();
  a = await newConsoleAccount(e.t, '10.3.0.1');
  b = await newConsoleAccount(e.t, '10.3.0.2');
}, 120_000);
afterAll(() => e?.close());

interface ClientOut { kind: 'machine' | 'user'; client_id: string; client_secret?: string; redirect_uris: string[]; scopes: string[]; revoked_at: string | null; previous_secret_expires_at: string | null }
const call = (login: ConsoleLogin, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  e.t.app.inject({ method, url: `/console/v1${url}`, headers: bearer(login.token), ...(payload ? { payload } : {}) });

async function newApp(login: ConsoleLogin, redirectUris = ['https://app.example.org/cb']) {
  const res = await call(login, 'POST', '/apps', { name: `App ${randomBytes(2).toString('hex')}`, redirect_uris: redirectUris });
  expect(res.statusCode, res.body).toBe(201);
  const data = res.json().data as { app_id: string; developer_id: string; clients: ClientOut[] };
  const machine = data.clients.find((c) => c.kind === 'machine')!;
  const user = data.clients.find((c) => c.kind === 'user')!;
  return { appId: data.app_id, developer_id: data.developer_id, client_id: machine.client_id, client_secret: machine.client_secret!, user_client_id: user.client_id };
}

const tokenStatus = async (client_id: string, client_secret: string) =>
  (await e.t.app.inject({ method: 'POST', url: `${authPath(e.t)}/oauth/token`, payload: { grant_type: 'client_credentials', client_id, client_secret, audience: e.t.config.audience } })).statusCode;

describe('apps', () => {
  it('the sign-up app\'s secret is shown at the first read only, and works', async () => {
    const first = await call(a, 'GET', `/apps/${a.appId}`);
    expect(first.statusCode).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    const machine = (first.json().data.clients as ClientOut[]).find((c) => c.kind === 'machine')!;
    expect(machine.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const again = await call(a, 'GET', `/apps/${a.appId}`);
    expect((again.json().data.clients as ClientOut[]).every((c) => c.client_secret === undefined)).toBe(true);
    expect(await tokenStatus(machine.client_id, machine.client_secret!)).toBe(200);
    // Never stored in clear: only its hash.
    const row = await e.t.db.selectFrom('oauth_clients').select(['secret_hash', 'secret_reveal_pending']).where('client_id', '=', machine.client_id).executeTakeFirstOrThrow();
    expect(row).toEqual({ secret_hash: createHash('sha256').update(machine.client_secret!).digest('hex'), secret_reveal_pending: false });
  });

  it('creates an app (machine credential + user client), secret in the answer only; lists and reads it', async () => {
    const made = await newApp(a);
    expect(await tokenStatus(made.client_id, made.client_secret)).toBe(200);
    expect(made.developer_id).toBe(a.developerId);
    const list = await call(a, 'GET', '/apps');
    expect(list.statusCode).toBe(200);
    const apps = list.json().data as { app_id: string; clients: ClientOut[] }[];
    expect(apps.map((x) => x.app_id)).toEqual([a.appId, made.appId]);
    expect(apps.flatMap((x) => x.clients).every((c) => c.client_secret === undefined)).toBe(true);
    const read = (await call(a, 'GET', `/apps/${made.appId}`)).json().data;
    expect(read.env).toBe('sandbox');
    const user = (read.clients as ClientOut[]).find((c) => c.kind === 'user')!;
    expect(user.redirect_uris).toEqual(['https://app.example.org/cb']);
    expect(user.scopes).toContain('external.appointment.write');
    expect(user.client_secret).toBeUndefined();
  });

  it('400 names every bad field of a new app', async () => {
    const res = await call(a, 'POST', '/apps', { name: '', redirect_uris: ['ftp://x', 'https://ok.example.org/cb#frag'] });
    expect(res.statusCode).toBe(400);
    const fields = (res.json().errors as { field: string }[]).map((x) => x.field);
    expect(fields).toContain('name');
    const bad = await call(a, 'POST', '/apps', { name: 'ok', redirect_uris: ['ftp://x', 'https://ok.example.org/cb#frag'] });
    expect(bad.statusCode).toBe(400);
    expect((bad.json().errors as { field: string }[]).map((x) => x.field)).toEqual(['redirect_uris[0]', 'redirect_uris[1]']);
    const other = await call(a, 'POST', '/apps', { name: 'ok', developer_id: b.developerId });
    expect(other.statusCode).toBe(400);
    expect(other.json().errors[0].field).toBe('developer_id');
    expect(await e.t.db.selectFrom('apps').select('id').where('developer_id', '=', b.developerId).execute()).toHaveLength(1);
  });
});

describe('rotation', () => {
  it('with a grace period the old secret keeps working until it ends, then fails', async () => {
    const made = await newApp(a);
    const res = await call(a, 'POST', `/apps/${made.appId}/credentials/${made.client_id}/rotate`, { grace_period_seconds: 1 });
    expect(res.statusCode, res.body).toBe(200);
    const rotated = res.json().data as ClientOut;
    expect(rotated.client_secret).toBeTruthy();
    expect(rotated.previous_secret_expires_at).toBeTruthy();
    expect(await tokenStatus(made.client_id, rotated.client_secret!)).toBe(200);
    expect(await tokenStatus(made.client_id, made.client_secret)).toBe(200);
    await new Promise((r) => setTimeout(r, 1_200));
    expect(await tokenStatus(made.client_id, made.client_secret)).toBe(401);
    expect(await tokenStatus(made.client_id, rotated.client_secret!)).toBe(200);
  });

  it('without a grace period the old secret fails at once; a third secret ends an overlap', async () => {
    const made = await newApp(a);
    const one = (await call(a, 'POST', `/apps/${made.appId}/credentials/${made.client_id}/rotate`, { grace_period_seconds: 0 })).json().data as ClientOut;
    expect(await tokenStatus(made.client_id, made.client_secret)).toBe(401);
    expect(await tokenStatus(made.client_id, one.client_secret!)).toBe(200);
    const two = (await call(a, 'POST', `/apps/${made.appId}/credentials/${made.client_id}/rotate`, { grace_period_seconds: 3600 })).json().data as ClientOut;
    const three = (await call(a, 'POST', `/apps/${made.appId}/credentials/${made.client_id}/rotate`, {})).json().data as ClientOut;
    expect(await tokenStatus(made.client_id, one.client_secret!)).toBe(401);
    expect(await tokenStatus(made.client_id, two.client_secret!)).toBe(401);
    expect(await tokenStatus(made.client_id, three.client_secret!)).toBe(200);
  });

  it('refuses a grace period over 24 h (400), a user client (409) and another account\'s client (404)', async () => {
    const made = await newApp(a);
    const long = await call(a, 'POST', `/apps/${made.appId}/credentials/${made.client_id}/rotate`, { grace_period_seconds: 86_401 });
    expect(long.statusCode).toBe(400);
    expect(long.json().errors[0].field).toBe('grace_period_seconds');
    expect((await call(a, 'POST', `/apps/${made.appId}/credentials/${made.user_client_id}/rotate`, {})).statusCode).toBe(409);
    expect((await call(b, 'POST', `/apps/${made.appId}/credentials/${made.client_id}/rotate`, {})).statusCode).toBe(404);
    expect(await tokenStatus(made.client_id, made.client_secret)).toBe(200);
  });
});

describe('redirect URIs', () => {
  it('a new URI works for a PKCE sign-in at once; a removed one gets the error page', async () => {
    const made = await newApp(a, ['https://old.example.org/cb']);
    const res = await call(a, 'PUT', `/apps/${made.appId}/redirect_uris`, { redirect_uris: ['http://127.0.0.1:8123/cb', 'https://new.example.org/cb'] });
    expect(res.statusCode, res.body).toBe(200);
    const patient = { email: `pat-${randomBytes(3).toString('hex')}@example.org`, password: 'patient-pass-1' };
    const token = await userToken(e.t, { ...made, developer_id: made.developer_id }, { ...patient });
    expect(token).toBeTruthy();
    const code = await authorizeWithForms(e.t, made, { ...patient, redirectUri: 'https://new.example.org/cb' }, randomBytes(32).toString('base64url'));
    expect(code.location.origin).toBe('https://new.example.org');
    const old = new URLSearchParams({ response_type: 'code', client_id: made.user_client_id, redirect_uri: 'https://old.example.org/cb', scope: 'external.appointment.read', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' });
    const page = await e.t.app.inject({ url: `${authPath(e.t)}/authorize?${old}` });
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain('The redirect_uri is not registered for this app.');
  });

  it('400 for a bad URI (nothing changed), 404 for another account\'s app', async () => {
    const made = await newApp(a, ['https://keep.example.org/cb']);
    const bad = await call(a, 'PUT', `/apps/${made.appId}/redirect_uris`, { redirect_uris: ['https://fine.example.org/cb', 'not a url'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].field).toBe('redirect_uris[1]');
    expect((await call(b, 'PUT', `/apps/${made.appId}/redirect_uris`, { redirect_uris: ['https://evil.example.org/cb'] })).statusCode).toBe(404);
    const row = await e.t.db.selectFrom('oauth_clients').select('redirect_uris').where('client_id', '=', made.user_client_id).executeTakeFirstOrThrow();
    expect(row.redirect_uris).toEqual(['https://keep.example.org/cb']);
  });
});

describe('revocation', () => {
  it('a revoked machine credential gets no more tokens', async () => {
    const made = await newApp(a);
    const res = await call(a, 'DELETE', `/apps/${made.appId}/credentials/${made.client_id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.revoked_at).toBeTruthy();
    expect(await tokenStatus(made.client_id, made.client_secret)).toBe(401);
    // Again: no change; rotation of a revoked client is 409.
    expect((await call(a, 'DELETE', `/apps/${made.appId}/credentials/${made.client_id}`)).statusCode).toBe(200);
    expect((await call(a, 'POST', `/apps/${made.appId}/credentials/${made.client_id}/rotate`, {})).statusCode).toBe(409);
  });

  it('a revoked user client: its users\' tokens stop at once and its sign-in page is gone', async () => {
    const made = await newApp(a, ['http://127.0.0.1:8124/cb']);
    const patient = { email: `pat-${randomBytes(3).toString('hex')}@example.org`, password: 'patient-pass-1' };
    const token = await userToken(e.t, made, patient);
    expect((await e.t.app.inject({ url: '/v1/appointments', headers: bearer(token) })).statusCode).toBe(200);
    expect((await call(a, 'DELETE', `/apps/${made.appId}/credentials/${made.user_client_id}`)).statusCode).toBe(200);
    expect((await e.t.app.inject({ url: '/v1/appointments', headers: bearer(token) })).statusCode).toBe(401);
    await expect(userToken(e.t, made, patient)).rejects.toThrow(/authorize failed: 400/);
  });

  it('another account cannot revoke: 404 and the client still works', async () => {
    const made = await newApp(a);
    expect((await call(b, 'DELETE', `/apps/${made.appId}/credentials/${made.client_id}`)).statusCode).toBe(404);
    expect((await call(a, 'DELETE', `/apps/${made.appId}/credentials/cl_unknown`)).statusCode).toBe(404);
    expect(await tokenStatus(made.client_id, made.client_secret)).toBe(200);
    expect(await clientToken(e.t, made)).toBeTruthy();
  });
});

describe('isolation', () => {
  it('account B sees none of A\'s apps: not in its list, 404 on read (and A\'s unseen secret stays unseen)', async () => {
    const aSecond = await newConsoleAccount(e.t, '10.3.0.3');
    const list = (await call(b, 'GET', '/apps')).json().data as { app_id: string }[];
    expect(list.map((x) => x.app_id)).toEqual([b.appId]);
    const read = await call(b, 'GET', `/apps/${aSecond.appId}`);
    expect(read.statusCode).toBe(404);
    expect(read.json().errors[0].field).toBe('app_id');
    const pending = await e.t.db.selectFrom('oauth_clients').select('secret_reveal_pending').where('app_id', '=', aSecond.appId).where('kind', '=', 'confidential').executeTakeFirstOrThrow();
    expect(pending.secret_reveal_pending).toBe(true);
    expect((await call(b, 'GET', '/apps/ap_nope')).statusCode).toBe(404);
  });
});
