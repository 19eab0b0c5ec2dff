/**
 * Console API test helpers: console accounts made through the real sign-up page of the developer
 * console client (GET /authorize → sign-up form → sign-in form → code → token endpoint with PKCE; no
 * consent page for this first-party client), and their tokens.
 */
import { randomBytes } from 'node:crypto';
import { consoleClientId, consoleRedirectUri } from '../../src/domain/console/console-client.js';
import type { TestApp } from './app.js';
import { authPath, hiddenField } from './auth.js';
import { openWorkspaceSignIn, postSignIn } from './practice.js';

let counter = 0;
export const consoleEmail = (prefix = 'dev'): string => `${prefix}-${process.pid}-${++counter}-${randomBytes(3).toString('hex')}@console.test`;

/** Opens the console client's sign-in page (authorization code + PKCE). */
export function openConsoleSignIn(t: TestApp, opts: { scope?: string } = {}) {
  return openWorkspaceSignIn(t, { clientId: consoleClientId(t.config.appEnv), redirectUri: consoleRedirectUri(t.config.publicBaseUrl), scope: opts.scope ?? 'console offline_access' });
}

/** Posts the sign-up form of an opened console sign-in (from `remoteAddress`, default 127.0.0.1). */
export async function postConsoleSignUp(t: TestApp, login: { email: string; password: string; passwordConfirm?: string }, remoteAddress?: string) {
  const opened = await openConsoleSignIn(t);
  const page = await t.app.inject({ url: `${authPath(t)}/authorize/signup?request=${encodeURIComponent(opened.form.request)}`, headers: { cookie: opened.cookie } });
  if (page.statusCode !== 200) throw new Error(`sign-up page: ${page.statusCode}`);
  const form = { request: hiddenField(page.body, 'request'), csrf_token: hiddenField(page.body, 'csrf_token') };
  const res = await t.app.inject({
    method: 'POST',
    url: `${authPath(t)}/authorize/signup`,
    headers: { cookie: opened.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ ...form, email: login.email, password: login.password, password_confirm: login.passwordConfirm ?? login.password }).toString(),
    ...(remoteAddress ? { remoteAddress } : {}),
  });
  return { page, res };
}

/** Signs in to the console (no consent page) and exchanges the code: the whole token response. */
export async function consoleTokens(t: TestApp, login: { email: string; password: string }): Promise<{ access_token: string; refresh_token?: string }> {
  const opened = await openConsoleSignIn(t);
  const signIn = await postSignIn(t, opened, login);
  if (signIn.statusCode !== 303) throw new Error(`console sign-in failed: ${signIn.statusCode} ${signIn.body.slice(0, 300)}`);
  const code = new URL(String(signIn.headers.location)).searchParams.get('code');
  if (!code) throw new Error(`no code in redirect ${signIn.headers.location}`);
  const res = await t.app.inject({
    method: 'POST',
    url: `${authPath(t)}/oauth/token`,
    payload: { grant_type: 'authorization_code', client_id: consoleClientId(t.config.appEnv), code, redirect_uri: opened.redirectUri, code_verifier: opened.verifier },
  });
  if (res.statusCode !== 200) throw new Error(`code exchange failed: ${res.statusCode} ${res.body}`);
  return res.json() as { access_token: string; refresh_token?: string };
}

export interface ConsoleLogin {
  email: string;
  password: string;
  token: string;
  userId: string;
  /** The sandbox developer made at sign-up. */
  developerId: string;
  /** Its first app. */
  appId: string;
}

/** A console account through the real sign-up and sign-in pages, with its console token. */
export async function newConsoleAccount(t: TestApp, remoteAddress?: string): Promise<ConsoleLogin> {
  const email = consoleEmail();
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const { res } = await postConsoleSignUp(t, { email, password }, remoteAddress);
  if (res.statusCode !== 200) throw new Error(`console sign-up failed: ${res.statusCode} ${res.body.slice(0, 300)}`);
  const { access_token } = await consoleTokens(t, { email, password });
  const user = await t.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow();
  const member = await t.db.selectFrom('developer_members').select('developer_id').where('user_id', '=', user.id).executeTakeFirstOrThrow();
  const app = await t.db.selectFrom('apps').select('id').where('developer_id', '=', member.developer_id).executeTakeFirstOrThrow();
  return { email, password, token: access_token, userId: user.id, developerId: member.developer_id, appId: app.id };
}
