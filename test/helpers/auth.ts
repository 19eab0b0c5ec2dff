/** Real tokens from the running test app's endpoints (no shortcuts around the auth server). */
import { createHash, randomBytes } from 'node:crypto';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { createUser, EmailTaken } from '../../src/domain/users/create-user.js';
import type { TestApp } from './app.js';

/** A client-credentials access token (docs/api/auth.md#client-credentials); `scope` narrows the grant. */
export async function clientToken(t: TestApp, creds: NewDeveloper, scope?: string): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: `${authPath(t)}/oauth/token`,
    payload: {
      grant_type: 'client_credentials',
      client_id: creds.client_id,
      client_secret: creds.client_secret,
      audience: t.config.audience,
      ...(scope !== undefined ? { scope } : {}),
    },
  });
  if (res.statusCode !== 200) throw new Error(`token request failed: ${res.statusCode} ${res.body}`);
  return (res.json() as { access_token: string }).access_token;
}

export const bearer = (token: string): { authorization: string } => ({ authorization: `Bearer ${token}` });

/** The path the auth server is mounted at (`/auth` by default). */
export function authPath(t: TestApp): string {
  return new URL(t.config.authUrl).pathname.replace(/\/+$/, '');
}

/**
 * An anonymous end-user token (docs/api/auth.md#anonymous-tokens) for the developer's user client, obtained with
 * `POST /v1/token/anonymous-user` and a client-credentials token.
 */
export async function anonymousToken(t: TestApp, creds: NewDeveloper): Promise<string> {
  const machine = await clientToken(t, creds, 'external.anonymous_token.write');
  const res = await t.app.inject({
    method: 'POST',
    url: '/v1/token/anonymous-user',
    headers: bearer(machine),
    payload: { app_client_id: creds.user_client_id },
  });
  if (res.statusCode !== 200) throw new Error(`anonymous token request failed: ${res.statusCode} ${res.body}`);
  return (res.json() as { data: { access_token: string } }).data.access_token;
}

export interface UserLogin {
  email: string;
  password: string;
  /** Default `patient`. A provider needs `providerId` of a provider that exists. */
  role?: 'patient' | 'provider';
  providerId?: string;
  /** Space-separated scopes; default every user scope except `offline_access`. */
  scope?: string;
}

export interface UserTokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
  refresh_token?: string;
}

export const DEFAULT_USER_SCOPE = 'external.appointment.read external.appointment.write external.schedulable_entity.read';

/**
 * A user access token (docs/api/auth.md#authorization-code-with-pkce) through the real authorization code flow: creates the
 * login if it does not exist, then drives `GET /authorize` and the sign-in and approval forms with
 * plain form posts (cookies and CSRF token included), and exchanges the code with PKCE S256.
 */
export async function userToken(t: TestApp, creds: NewDeveloper, login: UserLogin): Promise<string> {
  return (await userTokenResponse(t, creds, login)).access_token;
}

/** As `userToken`, but the whole token response (with `refresh_token` when `offline_access` is asked for). */
export async function userTokenResponse(t: TestApp, creds: NewDeveloper, login: UserLogin): Promise<UserTokenResponse> {
  await ensureUser(t, login);
  const verifier = randomBytes(32).toString('base64url');
  const { code, redirectUri } = await authorizeWithForms(t, creds, login, verifier);
  const res = await t.app.inject({
    method: 'POST',
    url: `${authPath(t)}/oauth/token`,
    payload: { grant_type: 'authorization_code', client_id: creds.user_client_id, code, redirect_uri: redirectUri, code_verifier: verifier },
  });
  if (res.statusCode !== 200) throw new Error(`code exchange failed: ${res.statusCode} ${res.body}`);
  return res.json() as UserTokenResponse;
}

async function ensureUser(t: TestApp, login: UserLogin): Promise<void> {
  try {
    await createUser(t.db, {
      env: t.config.appEnv,
      email: login.email,
      password: login.password,
      role: login.role ?? 'patient',
      providerId: login.providerId ?? null,
    });
  } catch (e) {
    if (!(e instanceof EmailTaken)) throw e;
  }
}

/** Cookies of a response as `name=value` pairs. */
function cookiesOf(setCookie: string | string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of [setCookie ?? []].flat()) {
    const [pair] = c.split(';');
    const i = pair!.indexOf('=');
    out[pair!.slice(0, i)] = pair!.slice(i + 1);
  }
  return out;
}

const cookieHeader = (jar: Record<string, string>): string =>
  Object.entries(jar)
    .filter(([, v]) => v !== '')
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');

/** A hidden form field's value from a page. */
export function hiddenField(page: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(page);
  if (!m) throw new Error(`no ${name} field on the page`);
  return m[1]!;
}

/**
 * Runs `GET /authorize` → sign in → allow with form posts; returns the code from the redirect.
 * Exported for tests of the flow itself.
 */
export async function authorizeWithForms(
  t: TestApp,
  creds: NewDeveloper,
  login: Pick<UserLogin, 'email' | 'password' | 'scope'> & { redirectUri?: string; state?: string; extra?: Record<string, string> },
  verifier: string,
): Promise<{ code: string; redirectUri: string; state: string; location: URL }> {
  const base = authPath(t);
  const redirectUri = login.redirectUri ?? (await firstRedirectUri(t, creds.user_client_id));
  const state = login.state ?? randomBytes(8).toString('hex');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: creds.user_client_id,
    redirect_uri: redirectUri,
    scope: login.scope ?? DEFAULT_USER_SCOPE,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state,
    ...login.extra,
  });
  const page = await t.app.inject({ url: `${base}/authorize?${query}` });
  if (page.statusCode !== 200) throw new Error(`authorize failed: ${page.statusCode} ${page.headers.location ?? page.body.slice(0, 300)}`);
  const jar = cookiesOf(page.headers['set-cookie']);
  const form = { request: hiddenField(page.body, 'request'), csrf_token: hiddenField(page.body, 'csrf_token') };
  const signIn = await t.app.inject({
    method: 'POST',
    url: `${base}/authorize/signin`,
    headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ ...form, email: login.email, password: login.password }).toString(),
  });
  if (signIn.statusCode !== 303) throw new Error(`sign-in failed: ${signIn.statusCode}`);
  Object.assign(jar, cookiesOf(signIn.headers['set-cookie']));
  const allow = await t.app.inject({
    method: 'POST',
    url: `${base}/authorize/decision`,
    headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ ...form, decision: 'allow' }).toString(),
  });
  if (allow.statusCode !== 303) throw new Error(`approval failed: ${allow.statusCode} ${allow.body.slice(0, 300)}`);
  const location = new URL(String(allow.headers.location));
  const code = location.searchParams.get('code');
  if (!code) throw new Error(`no code in redirect: ${location.searchParams.get('error')} ${location.searchParams.get('error_description')}`);
  return { code, redirectUri, state, location };
}

async function firstRedirectUri(t: TestApp, clientId: string): Promise<string> {
  const row = await t.db.selectFrom('oauth_clients').select('redirect_uris').where('client_id', '=', clientId).executeTakeFirstOrThrow();
  if (!row.redirect_uris[0]) throw new Error(`client ${clientId} has no redirect URI`);
  return row.redirect_uris[0];
}
