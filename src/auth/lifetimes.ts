/**
 * Lifetimes of everything the auth server issues (docs/api/auth.md#lifetimes; RFC 9700 §2.1.1 and §4.14 on
 * short-lived codes and bounded refresh tokens).
 */

/** Access tokens: 60 minutes (docs/api/auth.md#lifetimes). */
export const ACCESS_TOKEN_TTL_SECONDS = 60 * 60;
/** Refresh tokens expire after 15 days without use (docs/api/auth.md#lifetimes). */
export const REFRESH_IDLE_TTL_MS = 15 * 24 * 60 * 60 * 1000;
/** …and 30 days after the sign-in that started the family, however often they are used. */
export const REFRESH_MAX_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** Login sessions (the sign-in page's cookie) end after 30 minutes of inactivity… */
export const SESSION_IDLE_TTL_MS = 30 * 60 * 1000;
/** …and one day after sign-in. */
export const SESSION_MAX_TTL_MS = 24 * 60 * 60 * 1000;
/** Authorization codes are single-use and live 60 seconds (RFC 6749 §4.1.2 recommends at most 10 minutes). */
export const AUTHORIZATION_CODE_TTL_MS = 60 * 1000;
/** A sign-in page (pending authorization request) stays usable for 30 minutes. */
export const AUTHORIZATION_REQUEST_TTL_MS = 30 * 60 * 1000;
