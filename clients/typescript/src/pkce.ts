/**
 * The authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636; docs/auth.md), for browsers and Node alike (Web Crypto).
 */
import type { RetryOptions } from './retry.js';
import { requestToken, userTokenFetch, type TokenResponse } from './tokens.js';

/** URL-safe base64 without padding. */
export function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A random `code_verifier`: 32 random bytes, URL-safe base64 (43 characters). */
export function createCodeVerifier(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** The S256 `code_challenge` of a verifier. */
export async function codeChallenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

/** A random `state` value. */
export function createState(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(16)));
}

export interface AuthorizeUrlOptions {
  /** `{auth_url}`, without a trailing slash. */
  authUrl: string;
  /** The public user client's id. */
  clientId: string;
  redirectUri: string;
  /** Space-separated scopes, e.g. `external.appointment.read external.appointment.write offline_access`. */
  scope: string;
  codeChallenge: string;
  state: string;
  /** `DeveloperApiPatient`, `DeveloperApiPatient-Sandbox` or the API address; omitted when undefined. */
  audience?: string;
  /** Links an earlier anonymous session (docs/auth.md, "Anonymous tokens"). */
  anonymousToken?: string;
  /** An e-mail address to pre-fill. */
  loginHint?: string;
}

/** The `{auth_url}/authorize` address to send the user to. */
export function authorizeUrl(opts: AuthorizeUrlOptions): string {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: opts.clientId,
    redirect_uri: opts.redirectUri,
    scope: opts.scope,
    code_challenge: opts.codeChallenge,
    code_challenge_method: 'S256',
    state: opts.state,
  });
  if (opts.audience) q.set('audience', opts.audience);
  if (opts.anonymousToken) q.set('anonymous_token', opts.anonymousToken);
  if (opts.loginHint) q.set('login_hint', opts.loginHint);
  return `${opts.authUrl.replace(/\/+$/, '')}/authorize?${q}`;
}

/** Everything a sign-in needs: verifier (keep it), state (check it) and the URL to open. */
export interface PkceStart {
  verifier: string;
  state: string;
  url: string;
}

/** Creates a verifier, its challenge and a state, and returns the authorize URL. */
export async function startAuthorization(opts: Omit<AuthorizeUrlOptions, 'codeChallenge' | 'state'> & { state?: string }): Promise<PkceStart> {
  const verifier = createCodeVerifier();
  const state = opts.state ?? createState();
  return { verifier, state, url: authorizeUrl({ ...opts, state, codeChallenge: await codeChallenge(verifier) }) };
}

/**
 * Reads the redirect back to the app: returns the `code`, or throws with the `error` and
 * `error_description` the authorization server sent, or when `state` does not match.
 */
export function parseCallback(callbackUrl: string | URL, expectedState: string): string {
  const q = new URL(callbackUrl).searchParams;
  if (q.get('state') !== expectedState) throw new Error('state does not match: the redirect was not started by this app');
  const error = q.get('error');
  if (error) throw new Error(`${error}: ${q.get('error_description') ?? ''}`.trim());
  const code = q.get('code');
  if (!code) throw new Error('no code in the redirect');
  return code;
}

/**
 * Exchanges an authorization code (RFC 6749 §4.1.3, RFC 7636; docs/auth.md). 429 and 503 answers are retried as
 * `Retry-After` says, network failures are not (`userTokenFetch`); `retry: false` turns retries off.
 */
export function exchangeCode(opts: {
  tokenUrl: string;
  clientId: string;
  code: string;
  redirectUri: string;
  verifier: string;
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  retry?: RetryOptions | false;
}): Promise<TokenResponse> {
  return requestToken(
    opts.tokenUrl,
    { grant_type: 'authorization_code', client_id: opts.clientId, code: opts.code, redirect_uri: opts.redirectUri, code_verifier: opts.verifier },
    userTokenFetch(opts.fetch, opts.retry),
  );
}
