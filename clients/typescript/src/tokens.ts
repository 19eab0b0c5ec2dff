/**
 * Access tokens: client credentials with caching and renewal before expiry, user tokens that
 * refresh themselves, and a fixed token. All token sources share one interface, `TokenSource`.
 */
import { errorFromResponse } from './errors.js';
import { withRetries, type RetryOptions } from './retry.js';

/** Anything that can hand out a current bearer token. */
export interface TokenSource {
  /** A token valid for at least the renewal margin. */
  getToken(): Promise<string>;
  /** Forgets the cached token, e.g. after the API answered 401. */
  invalidate?(): void;
}

/** A token endpoint answer (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope?: string;
  refresh_token?: string;
}

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * The fetch of a signed-in user's token requests (code exchange, refresh): answers 429 and 503 are
 * tried again as `Retry-After` says (the service refused before spending the code or token), but a
 * network failure is not (a single-use code or refresh token may have been spent); `false`: no retry.
 */
export function userTokenFetch(fetchFn: FetchLike = fetch, retry: RetryOptions | false = {}): FetchLike {
  if (retry === false) return fetchFn;
  const send = withRetries((request) => fetchFn(request), { ...retry, retryNetworkErrors: false });
  return (input, init) => send(new Request(input, init));
}

/** POSTs a JSON body to the token endpoint and returns its answer, or throws a `CarebookError`. */
export async function requestToken(tokenUrl: string, body: Record<string, string>, fetchFn: FetchLike = fetch): Promise<TokenResponse> {
  const res = await fetchFn(tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  const parsed = (await res.json().catch(() => undefined)) as unknown;
  if (!res.ok) throw errorFromResponse(res, parsed);
  return parsed as TokenResponse;
}

interface Cached {
  token: string;
  /** Epoch milliseconds after which the token is renewed. */
  renewAt: number;
}

export interface ClientCredentialsOptions {
  /** `{auth_url}/oauth/token`. */
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** The environment's API address ending in a slash (docs/auth.md, "Client credentials"). */
  audience: string;
  /** Space-separated scopes to narrow the grant to; all of the client's scopes when omitted. */
  scope?: string;
  /** Renew this many seconds before expiry (default 60). */
  renewBeforeSeconds?: number;
  fetch?: FetchLike;
  /** Current time in milliseconds; replaceable in tests. */
  now?: () => number;
}

/**
 * Client-credentials tokens (docs/auth.md, "Client credentials"), cached until shortly before they expire. Concurrent
 * callers share one token request.
 */
export class ClientCredentialsTokenSource implements TokenSource {
  private cached: Cached | undefined;
  private pending: Promise<string> | undefined;
  /** How many token requests were made (for diagnostics and tests). */
  requests = 0;

  constructor(private readonly opts: ClientCredentialsOptions) {}

  /** A cached token, or a new one when none is cached or the cached one is about to expire. */
  async getToken(): Promise<string> {
    const now = (this.opts.now ?? Date.now)();
    if (this.cached && now < this.cached.renewAt) return this.cached.token;
    this.pending ??= this.fetchToken().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Drops the cached token. */
  invalidate(): void {
    this.cached = undefined;
  }

  private async fetchToken(): Promise<string> {
    this.requests += 1;
    const res = await requestToken(
      this.opts.tokenUrl,
      {
        grant_type: 'client_credentials',
        client_id: this.opts.clientId,
        client_secret: this.opts.clientSecret,
        audience: this.opts.audience,
        ...(this.opts.scope ? { scope: this.opts.scope } : {}),
      },
      this.opts.fetch,
    );
    const now = (this.opts.now ?? Date.now)();
    this.cached = { token: res.access_token, renewAt: now + renewDelayMs(res.expires_in, this.opts.renewBeforeSeconds ?? 60) };
    return res.access_token;
  }
}

/** Milliseconds until a token of `expiresIn` seconds should be renewed (never less than half its life). */
function renewDelayMs(expiresIn: number, renewBeforeSeconds: number): number {
  return Math.max(expiresIn / 2, expiresIn - renewBeforeSeconds) * 1000;
}

export interface UserTokenOptions {
  /** `{auth_url}/oauth/token`. */
  tokenUrl: string;
  /** The public user client's id. */
  clientId: string;
  /** The answer of the code exchange (or of an earlier refresh). */
  initial: TokenResponse;
  /** Renew this many seconds before expiry (default 60). */
  renewBeforeSeconds?: number;
  /** Called with every new token response, e.g. to persist the rotated refresh token. */
  onRefresh?: (tokens: TokenResponse) => void | Promise<void>;
  fetch?: FetchLike;
  /** Retry policy for 429/503 answers to the refresh (`userTokenFetch`); `false` turns it off. */
  retry?: RetryOptions | false;
  now?: () => number;
}

/**
 * A signed-in user's tokens (RFC 6749 §4.1, RFC 7636; docs/auth.md). When the access token nears expiry and a refresh
 * token exists (`offline_access`), it is refreshed; the refresh token rotates on every use, so the
 * newest one is kept (and reported through `onRefresh`).
 */
export class UserTokenSource implements TokenSource {
  private tokens: TokenResponse;
  private renewAt: number;
  private pending: Promise<string> | undefined;

  constructor(private readonly opts: UserTokenOptions) {
    this.tokens = opts.initial;
    this.renewAt = this.now() + renewDelayMs(opts.initial.expires_in, opts.renewBeforeSeconds ?? 60);
  }

  /** The current refresh token, if any. */
  get refreshToken(): string | undefined {
    return this.tokens.refresh_token;
  }

  /** A current access token, refreshing first when it is about to expire. */
  async getToken(): Promise<string> {
    if (this.now() < this.renewAt || !this.tokens.refresh_token) return this.tokens.access_token;
    return this.refresh();
  }

  /** Forces a refresh now (one request even when called concurrently). */
  refresh(): Promise<string> {
    this.pending ??= (async () => {
      const refreshToken = this.tokens.refresh_token;
      if (!refreshToken) throw new Error('no refresh token: request the offline_access scope');
      const res = await refreshUserToken({
        tokenUrl: this.opts.tokenUrl, clientId: this.opts.clientId, refreshToken, fetch: this.opts.fetch, retry: this.opts.retry,
      });
      this.tokens = res;
      this.renewAt = this.now() + renewDelayMs(res.expires_in, this.opts.renewBeforeSeconds ?? 60);
      await this.opts.onRefresh?.(res);
      return res.access_token;
    })().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Marks the access token as expired, so the next call refreshes it. */
  invalidate(): void {
    this.renewAt = 0;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }
}

/**
 * Exchanges a refresh token for new tokens (RFC 6749 §6; docs/auth.md, "Refresh"); 429 and 503 answers are
 * retried (`userTokenFetch`), `retry: false` turns that off.
 */
export function refreshUserToken(opts: { tokenUrl: string; clientId: string; refreshToken: string; fetch?: FetchLike; retry?: RetryOptions | false }): Promise<TokenResponse> {
  return requestToken(
    opts.tokenUrl,
    { grant_type: 'refresh_token', refresh_token: opts.refreshToken, client_id: opts.clientId },
    userTokenFetch(opts.fetch, opts.retry),
  );
}

/** A token that never changes (e.g. an anonymous token held by a browser). */
export function staticToken(token: string): TokenSource {
  return { getToken: async () => token };
}
