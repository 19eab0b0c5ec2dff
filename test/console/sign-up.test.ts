/**
 * Console sign-up and sign-in (docs/auth.md, "Console accounts and sign-in"; docs/decisions/0015-developer-console.md):
 * the real pages of the developer console client, the sandbox developer and its own directory copy
 * made at sign-up, the shared sign-up throttle, and which accounts may sign in through which client.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { take } from '../../src/auth/rate-limit.js';
import { consoleClientId, consoleRedirectUri } from '../../src/domain/console/console-client.js';
import { COPY_PROVIDERS, copyTag } from '../../src/domain/console/sandbox-directory.js';
import { createUser } from '../../src/domain/users/create-user.js';
import { type SchedulingEnv } from '../appointments/fixtures.js';
import { authorizeWithForms, bearer, clientToken } from '../helpers/auth.js';
import { consoleEmail, consoleTokens, newConsoleAccount, openConsoleSignIn, postConsoleSignUp, type ConsoleLogin } from '../helpers/console.js';
import { openWorkspaceSignIn, postSignIn, PRACTICE_A, practiceEnv, practiceMember } from '../helpers/practice.js';

let e: SchedulingEnv;
let a: ConsoleLogin;
let signUpMs = 0;
beforeAll(async () => {
  e = await practiceEnv();
  const started = Date.now();
  a = await newConsoleAccount(e.t, '10.1.0.1');
  signUpMs = Date.now() - started;
}, 120_000);
afterAll(() => e?.close());

/** The machine credential of the account's first app, its secret read once through the Console API. */
async function machineCreds(login: ConsoleLogin) {
  const res = await e.t.app.inject({ url: `/console/v1/apps/${login.appId}`, headers: bearer(login.token) });
  expect(res.statusCode).toBe(200);
  const clients = res.json().data.clients as { kind: string; client_id: string; client_secret?: string }[];
  const machine = clients.find((c) => c.kind === 'machine')!;
  const user = clients.find((c) => c.kind === 'user')!;
  expect(machine.client_secret).toBeTruthy();
  return { developer_id: login.developerId, client_id: machine.client_id, client_secret: machine.client_secret!, user_client_id: user.client_id };
}

describe('the developer console client', () => {
  it('exists as a public first-party client with the console redirect URI', async () => {
    const row = await e.t.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', consoleClientId(e.t.config.appEnv)).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ kind: 'public', secret_hash: null, redirect_uris: [consoleRedirectUri(e.t.config.publicBaseUrl)], app_id: null });
    expect(consoleClientId('production')).toBe('developer-console');
    expect(consoleClientId('sandbox')).toBe('developer-console-sandbox');
  });

  it('offers a developer sign-up on its sign-in page', async () => {
    const opened = await openConsoleSignIn(e.t);
    expect(opened.page.body).toContain('Carebook developer console');
    expect(opened.page.body).toContain('Create a developer account');
    const { page } = await postConsoleSignUp(e.t, { email: consoleEmail(), password: 'short', passwordConfirm: 'short' }, '10.1.0.2');
    expect(page.body).toContain('Create your developer account');
  });
});

describe('sign-up', () => {
  it('creates a developer account, a sandbox developer it owns and its own directory copy', async () => {
    console.info(`console sign-up + sign-in through the pages: ${signUpMs} ms`);
    const user = await e.t.db.selectFrom('users').select(['role', 'env']).where('id', '=', a.userId).executeTakeFirstOrThrow();
    expect(user).toEqual({ role: 'developer', env: 'sandbox' });
    const dev = await e.t.db.selectFrom('developers').select(['env', 'name']).where('id', '=', a.developerId).executeTakeFirstOrThrow();
    expect(dev).toEqual({ env: 'sandbox', name: a.email });
    const members = await e.t.db.selectFrom('developer_members').select(['developer_id', 'role']).where('user_id', '=', a.userId).execute();
    expect(members).toEqual([{ developer_id: a.developerId, role: 'owner' }]);
    const tag = copyTag(a.developerId);
    const own = await e.t.db.selectFrom('developer_provider_locations').select('provider_location_id').where('developer_id', '=', a.developerId).execute();
    const copy = own.filter((r) => r.provider_location_id.startsWith(`pr_${tag}_`));
    expect(copy.length).toBeGreaterThanOrEqual(COPY_PROVIDERS);
    // The sandbox fixtures too, as for every sandbox developer.
    expect(own.map((r) => r.provider_location_id)).toContain('pr_pending|lo_pending');
    // Nobody else's directory lists the copy.
    const others = await e.t.db.selectFrom('developer_provider_locations').select('developer_id').where('provider_location_id', 'like', `pr_${tag}_%`).where('developer_id', '<>', a.developerId).execute();
    expect(others).toEqual([]);
  });

  it('the copy is visible to the new machine credential through /v1, and not to another developer', async () => {
    const creds = await machineCreds(a);
    const token = await clientToken(e.t, creds);
    const tag = copyTag(a.developerId);
    const loc = await e.t.db.selectFrom('locations').select(['id', 'zip_code']).where('id', 'like', `lo_${tag}_%`).where('zip_code', 'is not', null).orderBy('id').executeTakeFirstOrThrow();
    const pl = await e.t.db.selectFrom('provider_locations').select('id').where('location_id', '=', loc.id).executeTakeFirstOrThrow();
    const provider = await e.t.db.selectFrom('providers').select('main_specialty_id').where('id', '=', pl.id.split('|')[0]!).executeTakeFirstOrThrow();
    const query = `zip_code=${loc.zip_code}&specialty_id=${provider.main_specialty_id}&max_distance_to_patient_mi=5&page_size=100`;
    const search = await e.t.app.inject({ url: `/v1/provider_locations?${query}`, headers: bearer(token) });
    expect(search.statusCode, search.body).toBe(200);
    const ids = (search.json().data.provider_locations as { provider_location_id: string }[]).map((p) => p.provider_location_id);
    expect(ids).toContain(pl.id);
    expect((await e.t.app.inject({ url: `/v1/provider_locations/${encodeURIComponent(pl.id)}`, headers: bearer(token) })).statusCode).toBe(200);
    // The scheduling fixture's developer does not see it.
    const other = await clientToken(e.t, e.dev);
    expect((await e.t.app.inject({ url: `/v1/provider_locations/${encodeURIComponent(pl.id)}`, headers: bearer(other) })).statusCode).toBe(404);
    const otherSearch = await e.t.app.inject({ url: `/v1/provider_locations?${query}`, headers: bearer(other) });
    expect(otherSearch.statusCode).toBe(200);
    expect((otherSearch.json().data.provider_locations as { provider_location_id: string }[]).map((p) => p.provider_location_id)).not.toContain(pl.id);
  });

  it('answers an address that already has an account like a new one, and changes nothing', async () => {
    const { res } = await postConsoleSignUp(e.t, { email: a.email, password: 'another-password-1' }, '10.1.0.3');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('If this e-mail address already had an account, it is unchanged');
    expect(await e.t.db.selectFrom('developer_members').select('developer_id').where('user_id', '=', a.userId).execute()).toHaveLength(1);
    await expect(consoleTokens(e.t, { email: a.email, password: 'another-password-1' })).rejects.toThrow(/401/);
  });

  it('is throttled per address with the patients\' sign-up throttle (30 an hour): the 31st is 429 and creates nothing', async () => {
    const address = `10.2.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
    // 29 sign-ups already counted for the address (patients' or developers': one bucket), then one real console sign-up.
    for (let i = 0; i < 29; i++) expect(await take(e.t.db, `signup:addr:${e.t.config.appEnv}:${address}`, { max: 30, windowMs: 3_600_000 })).toBe(0);
    const thirtieth = consoleEmail('thirtieth');
    expect((await postConsoleSignUp(e.t, { email: thirtieth, password: 'password-30' }, address)).res.statusCode).toBe(200);
    const blocked = consoleEmail('blocked');
    const { res } = await postConsoleSignUp(e.t, { email: blocked, password: 'password-31' }, address);
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBeTruthy();
    expect(await e.t.db.selectFrom('users').select('id').where('email', '=', blocked).execute()).toEqual([]);
    expect(await e.t.db.selectFrom('users').select('role').where('email', '=', thirtieth).executeTakeFirst()).toEqual({ role: 'developer' });
  });
});

describe('who may sign in where', () => {
  it('the console token has role developer and a refresh token; the refreshed token works too', async () => {
    const tokens = await consoleTokens(e.t, a);
    expect(tokens.refresh_token).toBeTruthy();
    const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({ role: 'developer', client_id: consoleClientId(e.t.config.appEnv) });
    expect((await e.t.app.inject({ url: '/console/v1/me', headers: bearer(tokens.access_token) })).statusCode).toBe(200);
  });

  it('a patient cannot sign in to the console (403 page, no code)', async () => {
    const email = consoleEmail('patient');
    await createUser(e.t.db, { env: e.t.config.appEnv, email, password: 'patient-pass-1', role: 'patient' });
    const res = await postSignIn(e.t, await openConsoleSignIn(e.t), { email, password: 'patient-pass-1' });
    expect(res.statusCode).toBe(403);
    expect(res.headers.location).toBeUndefined();
    expect(res.body).toContain('This account cannot sign in to the Carebook developer console');
  });

  it('practice staff cannot sign in to the console', async () => {
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    const res = await postSignIn(e.t, await openConsoleSignIn(e.t), { email: staff.email, password: staff.password });
    expect(res.statusCode).toBe(403);
  });

  it('a developer account cannot sign in to the practice workspace', async () => {
    const res = await postSignIn(e.t, await openWorkspaceSignIn(e.t), { email: a.email, password: a.password });
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('it is for practice staff and providers');
  });

  it('a developer account cannot sign in through a developer\'s app (not even its own): 403, no code', async () => {
    const err = await authorizeWithForms(e.t, e.dev, { email: a.email, password: a.password }, randomBytes(32).toString('base64url')).then(() => undefined, (x: Error) => x);
    expect(err?.message).toBe('sign-in failed: 403');
    const opened = await openWorkspaceSignIn(e.t, { clientId: e.dev.user_client_id, redirectUri: 'http://127.0.0.1:9/callback', scope: 'external.appointment.read' });
    const res = await postSignIn(e.t, opened, { email: a.email, password: a.password });
    expect(res.body).toContain('developer accounts only to the Carebook developer console');
    expect(await e.t.db.selectFrom('authorization_codes').select('code_hash').where('user_id', '=', a.userId).where('client_id', '<>', consoleClientId(e.t.config.appEnv)).execute()).toEqual([]);
  });
});
