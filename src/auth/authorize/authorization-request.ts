/**
 * Validation of `GET {auth_url}/authorize` (RFC 6749 §4.1.1, §4.1.2.1; RFC 7636 §4.3), redirects
 * back to the client, and the CSRF tokens of the sign-in forms. Framework-free.
 *
 * Order matters (RFC 6749 §4.1.2.1): until `client_id` and `redirect_uri` are known good, errors are
 * shown on an error page and never redirected; after that, errors go back to the client as
 * `error` and `error_description` on its redirect URI.
 */
import { redirectUriProblem } from '../../domain/developers/create-developer.js';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { TokenVerifier } from '../../domain/credentials/principal.js';
import { isValidS256Challenge } from '../pkce.js';

export interface ValidAuthorizeRequest {
  clientId: string;
  developerId: string;
  appName: string;
  redirectUri: string;
  scopes: string[];
  state: string | null;
  codeChallenge: string;
  loginHint: string | null;
  anonymousSubject: string | null;
  /** `prompt=login`: ask for the password even with a live login session. */
  forceLogin: boolean;
}

export type AuthorizeCheck =
  | { kind: 'ok'; request: ValidAuthorizeRequest }
  | { kind: 'error-page'; message: string }
  | { kind: 'redirect-error'; redirectUri: string; state: string | null; error: string; description: string };

/** The `audience` values the authorize endpoint accepts in this environment (docs/api/auth.md#authorization-code-with-pkce). */
export function acceptedAuthorizeAudiences(config: Config): string[] {
  return [config.appEnv === 'production' ? 'DeveloperApiPatient' : 'DeveloperApiPatient-Sandbox', config.audience];
}

const MAX_PARAM = 2048;

/** Checks an authorization request. Nothing is stored (see request-handle.ts). */
export async function checkAuthorizeRequest(
  deps: { config: Config; db: Db; verifier: TokenVerifier },
  query: Record<string, unknown>,
): Promise<AuthorizeCheck> {
  const { config, db } = deps;
  const one = (name: string): string | undefined | null => {
    const v = query[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v.length > MAX_PARAM) return null; // repeated (RFC 6749 §3.1) or absurd
    return v;
  };

  const clientId = one('client_id');
  if (!clientId) return { kind: 'error-page', message: 'The request names no valid client_id.' };
  const client = await db
    .selectFrom('oauth_clients')
    .innerJoin('developers', 'developers.id', 'oauth_clients.developer_id')
    .select(['oauth_clients.client_id', 'oauth_clients.developer_id', 'oauth_clients.scopes', 'oauth_clients.redirect_uris', 'developers.name'])
    .where('oauth_clients.client_id', '=', clientId)
    .where('oauth_clients.env', '=', config.appEnv)
    // A revoked client (docs/decisions/0015-developer-console.md, "Apps") is as unknown.
    .where('oauth_clients.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!client || client.redirect_uris.length === 0) {
    return { kind: 'error-page', message: 'The app that sent you here is not registered for sign-in in this environment.' };
  }
  const redirectUri = one('redirect_uri');
  if (!redirectUri) return { kind: 'error-page', message: 'The request has no valid redirect_uri.' };
  // Exact string match against the registered URIs (RFC 9700 §2.1, §4.1.3).
  if (!client.redirect_uris.includes(redirectUri)) {
    return { kind: 'error-page', message: 'The redirect_uri is not registered for this app.' };
  }
  // A URI stored before production refused plain http is refused here too (never redirected to).
  if (redirectUriProblem(redirectUri, config.appEnv)) {
    return { kind: 'error-page', message: 'The redirect_uri of this app is not allowed in this environment (https is required).' };
  }

  const stateRaw = one('state');
  const state = typeof stateRaw === 'string' ? stateRaw : null;
  const fail = (error: string, description: string): AuthorizeCheck => ({ kind: 'redirect-error', redirectUri, state, error, description });

  for (const name of Object.keys(query)) {
    if (Array.isArray(query[name])) return fail('invalid_request', `parameter ${name} must not be repeated`);
  }
  if (stateRaw === null) return fail('invalid_request', 'state is too long');

  const responseType = one('response_type');
  if (responseType !== 'code') {
    return responseType
      ? fail('unsupported_response_type', 'only response_type=code is supported')
      : fail('invalid_request', 'response_type is required');
  }

  const challenge = one('code_challenge');
  const method = one('code_challenge_method');
  if (!challenge) return fail('invalid_request', 'code_challenge is required (PKCE, RFC 7636)');
  if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256; plain is not supported');
  if (!isValidS256Challenge(challenge)) return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the code_verifier (43 characters)');

  const scopeRaw = one('scope');
  if (scopeRaw === null) return fail('invalid_request', 'scope is malformed');
  let scopes: string[];
  if (scopeRaw === undefined || scopeRaw.trim() === '') {
    scopes = client.scopes.filter((s) => s !== 'offline_access');
  } else {
    scopes = [...new Set(scopeRaw.split(' ').filter(Boolean))];
    const unknown = scopes.filter((s) => !client.scopes.includes(s));
    if (unknown.length) return fail('invalid_scope', `scope not allowed for this client: ${unknown.join(' ')}`);
  }
  if (scopes.length === 0) return fail('invalid_scope', 'no scope requested');

  const audience = one('audience');
  if (audience === null) return fail('invalid_request', 'audience is malformed');
  if (audience !== undefined && !acceptedAuthorizeAudiences(config).includes(audience)) {
    return fail('invalid_request', `audience must be ${acceptedAuthorizeAudiences(config).join(' or ')} in this environment`);
  }

  const loginHint = one('login_hint');
  if (loginHint === null || (loginHint && loginHint.length > 255)) return fail('invalid_request', 'login_hint is malformed');

  const anonymousToken = one('anonymous_token');
  let anonymousSubject: string | null = null;
  if (anonymousToken === null) return fail('invalid_request', 'anonymous_token is malformed');
  if (anonymousToken) {
    const principal = await deps.verifier.verify(anonymousToken).catch(() => undefined);
    if (!principal || principal.kind !== 'anonymous' || principal.developerId !== client.developer_id) {
      return fail('invalid_request', 'anonymous_token is not a valid anonymous token of this app');
    }
    anonymousSubject = principal.subject;
  }

  const prompt = one('prompt');
  return {
    kind: 'ok',
    request: {
      clientId: client.client_id,
      developerId: client.developer_id,
      appName: client.name,
      redirectUri,
      scopes,
      state,
      codeChallenge: challenge,
      loginHint: loginHint || null,
      anonymousSubject,
      forceLogin: typeof prompt === 'string' && prompt.split(' ').includes('login'),
    },
  };
}

/**
 * The client's redirect URI with response parameters added to its query (RFC 6749 §4.1.2), and
 * `iss` (RFC 9207, recommended by RFC 9700 §4.4.2 against mix-up attacks).
 */
export function redirectWith(redirectUri: string, params: Record<string, string | null | undefined>, issuer: string): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) url.searchParams.set(k, v);
  url.searchParams.set('iss', issuer);
  return url.toString();
}

/**
 * The CSRF token of a form (synchronizer token keyed by the browser cookie): HMAC-SHA256 of the
 * request handle under the browser's secret cookie. A cross-site page can neither read the cookie
 * nor the handle, so it cannot forge a form post.
 */
export function csrfToken(browserId: string, handle: string): string {
  return createHmac('sha256', browserId).update(`csrf:${handle}`).digest('base64url');
}

export function csrfTokenValid(browserId: string, handle: string, presented: unknown): boolean {
  return typeof presented === 'string' && safeEqual(csrfToken(browserId, handle), presented);
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
