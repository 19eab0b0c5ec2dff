/**
 * Sign-in for the developer console (docs/decisions/0015-developer-console.md, "Accounts"): the shared
 * first-party page session. Sign-up goes through the same sign-in page, which offers "Create a
 * developer account" for this client.
 */
import { browserSession } from '../../web-app/browser/session.js';

export type { AuthConfig } from '../../web-app/browser/session.js';

export const SCOPE = 'console offline_access';

export const { signIn, handleCallback, currentTokens, signOut } = browserSession({ scope: SCOPE, storagePrefix: 'carebook.console', homePath: '/console' });
