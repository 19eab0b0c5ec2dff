/** Sign-in for the practice workspace (docs/decisions/0014-practice-workspace.md, "Sign-in"): the shared first-party page session. */
import { browserSession } from '../../web-app/browser/session.js';

export type { AuthConfig } from '../../web-app/browser/session.js';

/** What the workspace asks for; the server caps it by the member's role (decision 0014, "Scopes"). */
export const SCOPE = 'practice.read practice.write practice.admin offline_access';

export const { signIn, handleCallback, currentTokens, signOut } = browserSession({ scope: SCOPE, storagePrefix: 'carebook.practice', homePath: '/practice' });
