/**
 * Practice API test helpers: staff logins made through the domain (src/domain/practices), real tokens
 * through the real sign-in of the practice workspace client (GET /authorize → sign-in form → code →
 * token endpoint with PKCE; no consent page for this first-party client), and two practices to test
 * isolation with.
 *
 * Practices: `PRACTICE_A` is the scheduling fixture's only practice (`pt_t`, test/appointments/fixtures.ts:
 * every `PL.*` belongs to it). `PRACTICE_B` (`pt_b`) is added by `addPracticeB` with one provider at one
 * location of its own (`PL_B`), joined to the given developer's directory so it can be booked through `/v1`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { insertMember } from '../../src/domain/practices/member-rows.js';
import { workspaceClientId, workspaceRedirectUri } from '../../src/domain/practices/workspace-client.js';
import { createUser } from '../../src/domain/users/create-user.js';
import { schedulingEnv, type SchedulingEnv } from '../appointments/fixtures.js';
import type { TestApp } from './app.js';
import { authPath, hiddenField } from './auth.js';

export const PRACTICE_A = 'pt_t';
export const PRACTICE_B = 'pt_b';
/** Practice B's provider and its one provider-location (Chicago, automatic confirmation). */
export const PROVIDER_B = 'pr_b';
export const PL_B = 'pr_b|lo_b';

export const ALL_PRACTICE_SCOPES = 'practice.read practice.write practice.admin';

let counter = 0;
const uniqueEmail = (prefix: string): string => `${prefix}-${process.pid}-${++counter}-${randomBytes(3).toString('hex')}@practice.test`;

/** Adds practice B (`pt_b`, provider `pr_b` at `lo_b`, weekly hours every day 08:00–18:00) to the sandbox directory, in `developerId`'s directory. */
export async function addPracticeB(t: TestApp, developerId: string): Promise<void> {
  await t.db.transaction().execute((trx) =>
    writeDirectory(
      trx,
      t.config.appEnv,
      {
        practices: [{ id: PRACTICE_B, name: 'Second practice' }],
        providers: [{
          id: PROVIDER_B, npi: '1234567893', practice_id: PRACTICE_B, first_name: 'Bea', last_name: 'Second', main_specialty_id: 'sp_t',
          specialty_ids: ['sp_t'], default_visit_reason_id: 'pc_t30', visit_reason_ids: ['pc_t30', 'pc_t60'],
        }],
        locations: [{
          id: 'lo_b', location_name: 'Clinic B', address1: '2 Lake St', city: 'Chicago', state: 'IL', zip_code: '60601', latitude: 41.88, longitude: -87.62,
          time_zone: 'America/Chicago', phone_number: '3125550100',
        }],
        provider_locations: [{
          provider_id: PROVIDER_B, location_id: 'lo_b',
          weekly_schedule: [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, start: '08:00', end: '18:00' })),
        }],
      },
      { developerId },
    ),
  );
}

/** The scheduling fixture (practice A) plus practice B, both in the first developer's directory (`opts` go to `testApp`). */
export async function practiceEnv(opts: Parameters<typeof schedulingEnv>[0] = {}): Promise<SchedulingEnv> {
  const e = await schedulingEnv(opts);
  await addPracticeB(e.t, e.dev.developer_id);
  return e;
}

export interface PracticeLogin {
  userId: string;
  token: string;
  email: string;
  password: string;
}

/**
 * A staff member of `practiceId` with `role`, created through the domain (`insertMember`), and a real
 * access token for them from the workspace client's sign-in (`scopes`: default all practice scopes;
 * the role caps them on every call).
 */
export async function practiceMember(
  t: TestApp,
  opts: { practiceId: string; role: 'practice_admin' | 'practice_staff'; email?: string; scopes?: string[] },
): Promise<PracticeLogin> {
  const email = opts.email ?? uniqueEmail(opts.role);
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const { userId } = await t.db.transaction().execute((trx) =>
    insertMember(trx, t.config.appEnv, { practiceId: opts.practiceId, email, password, role: opts.role }),
  );
  const token = await workspaceToken(t, { email, password, scope: (opts.scopes ?? ALL_PRACTICE_SCOPES.split(' ')).join(' ') });
  return { userId, token, email, password };
}

/** A provider user of `providerId` and their real token of the workspace client (`practice.read`). */
export async function providerUserToken(t: TestApp, providerId: string): Promise<PracticeLogin> {
  const email = uniqueEmail('provider');
  const password = `pw-${randomBytes(9).toString('base64url')}`;
  const user = await createUser(t.db, { env: t.config.appEnv, email, password, role: 'provider', providerId });
  const token = await workspaceToken(t, { email, password, scope: 'practice.read' });
  return { userId: user.user_id, token, email, password };
}

/** Cookies of a response as `name=value` pairs. */
function cookiesOf(setCookie: string | string[] | undefined): string {
  return [setCookie ?? []].flat().map((c) => c.split(';')[0]!).filter((p) => !p.endsWith('=')).join('; ');
}

/**
 * Starts the workspace client's sign-in: `GET /authorize` (PKCE S256). Returns the page and what
 * the forms need. Exported for tests of the sign-in itself.
 */
export async function openWorkspaceSignIn(t: TestApp, opts: { scope?: string; clientId?: string; redirectUri?: string } = {}) {
  const verifier = randomBytes(32).toString('base64url');
  const redirectUri = opts.redirectUri ?? workspaceRedirectUri(t.config.publicBaseUrl);
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: opts.clientId ?? workspaceClientId(t.config.appEnv),
    redirect_uri: redirectUri,
    scope: opts.scope ?? ALL_PRACTICE_SCOPES,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: randomBytes(6).toString('hex'),
  });
  const page = await t.app.inject({ url: `${authPath(t)}/authorize?${query}` });
  if (page.statusCode !== 200) throw new Error(`authorize failed: ${page.statusCode} ${page.body.slice(0, 300)}`);
  return {
    page,
    verifier,
    redirectUri,
    cookie: cookiesOf(page.headers['set-cookie']),
    form: { request: hiddenField(page.body, 'request'), csrf_token: hiddenField(page.body, 'csrf_token') },
  };
}

/** Posts the sign-in form of an opened sign-in. */
export function postSignIn(t: TestApp, opened: Awaited<ReturnType<typeof openWorkspaceSignIn>>, login: { email: string; password: string }) {
  return t.app.inject({
    method: 'POST',
    url: `${authPath(t)}/authorize/signin`,
    headers: { cookie: opened.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ ...opened.form, ...login }).toString(),
  });
}

/** A workspace access token through the whole real flow: authorize → sign in (no consent page) → code → token. */
export async function workspaceToken(t: TestApp, login: { email: string; password: string; scope?: string }): Promise<string> {
  const opened = await openWorkspaceSignIn(t, login.scope ? { scope: login.scope } : {});
  const signIn = await postSignIn(t, opened, login);
  if (signIn.statusCode !== 303) throw new Error(`workspace sign-in failed: ${signIn.statusCode} ${signIn.body.slice(0, 300)}`);
  const code = new URL(String(signIn.headers.location)).searchParams.get('code');
  if (!code) throw new Error(`no code in redirect ${signIn.headers.location}`);
  const res = await t.app.inject({
    method: 'POST',
    url: `${authPath(t)}/oauth/token`,
    payload: { grant_type: 'authorization_code', client_id: workspaceClientId(t.config.appEnv), code, redirect_uri: opened.redirectUri, code_verifier: opened.verifier },
  });
  if (res.statusCode !== 200) throw new Error(`code exchange failed: ${res.statusCode} ${res.body}`);
  return (res.json() as { access_token: string }).access_token;
}
