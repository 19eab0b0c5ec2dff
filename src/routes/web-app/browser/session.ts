/**
 * Sign-in for the service's first-party pages (the practice workspace, the developer console): the
 * authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636) against the page's first-party public
 * client, tokens kept in sessionStorage (gone when the tab closes), refreshed with the rotating
 * refresh token, and forgotten on sign-out. Each page makes one session with its scope, storage
 * keys and home path (docs/decisions/0014-practice-workspace.md, 0015-developer-console.md).
 */
import { exchangeCode, parseCallback, startAuthorization } from '../../../../clients/typescript/src/pkce.js';
import { UserTokenSource, type TokenResponse } from '../../../../clients/typescript/src/tokens.js';

export interface AuthConfig {
  clientId: string;
  authUrl: string;
  redirectUri: string;
}

interface Saved extends TokenResponse {
  /** When the access token was issued (ms), so a reloaded page knows how old it is. */
  obtained_at: number;
}

/** A page's sign-in session: `scope` asked for, sessionStorage keys under `storagePrefix`, `homePath` after the callback. */
export function browserSession(opts: { scope: string; storagePrefix: string; homePath: string }) {
  const TOKENS = `${opts.storagePrefix}.tokens`;
  const PKCE = `${opts.storagePrefix}.pkce`;
  const save = (t: TokenResponse): void => sessionStorage.setItem(TOKENS, JSON.stringify({ ...t, obtained_at: Date.now() }));
  return {
    /** Starts the sign-in: keeps the verifier and state in this tab and goes to the sign-in page. */
    async signIn(cfg: AuthConfig): Promise<void> {
      const start = await startAuthorization({ authUrl: cfg.authUrl, clientId: cfg.clientId, redirectUri: cfg.redirectUri, scope: opts.scope });
      sessionStorage.setItem(PKCE, JSON.stringify({ verifier: start.verifier, state: start.state }));
      location.assign(start.url);
    },
    /** Finishes the sign-in on the callback page: checks the state, exchanges the code, keeps the tokens. */
    async handleCallback(cfg: AuthConfig): Promise<void> {
      const saved = JSON.parse(sessionStorage.getItem(PKCE) ?? 'null') as { verifier: string; state: string } | null;
      sessionStorage.removeItem(PKCE);
      const callbackUrl = location.href;
      history.replaceState(null, '', opts.homePath);
      if (!saved) throw new Error('The sign-in was not started in this tab. Please sign in again.');
      const code = parseCallback(callbackUrl, saved.state);
      save(await exchangeCode({ tokenUrl: `${cfg.authUrl}/oauth/token`, clientId: cfg.clientId, code, redirectUri: cfg.redirectUri, verifier: saved.verifier }));
    },
    /** The signed-in session's tokens, or undefined when nobody is signed in in this tab. */
    currentTokens(cfg: AuthConfig): UserTokenSource | undefined {
      const saved = JSON.parse(sessionStorage.getItem(TOKENS) ?? 'null') as Saved | null;
      if (!saved) return undefined;
      const source = new UserTokenSource({ tokenUrl: `${cfg.authUrl}/oauth/token`, clientId: cfg.clientId, initial: saved, onRefresh: save });
      // A reloaded page: the token's clock started when it was issued, not now.
      if (Date.now() - saved.obtained_at > (saved.expires_in - 60) * 1000) source.invalidate();
      return source;
    },
    /** Forgets the session in this tab (the refresh token family ends with its lifetime). */
    signOut(): void {
      sessionStorage.removeItem(TOKENS);
      sessionStorage.removeItem(PKCE);
    },
  };
}
