/**
 * The pending authorization request a sign-in page or form names (`request`, in the query or the
 * form), checked for this browser before anything is shown or done. Framework-free.
 */
import { csrfTokenValid } from './authorization-request.js';
import { loadAuthorizationRequest, storeOnFirstUse, type RequestHandleDeps, type StoredAuthorizationRequest } from './request-handle.js';

/** A posted form: where it came from and the CSRF token it carries. */
export interface PostedForm {
  /** The `Origin` header, when sent. */
  origin: string | undefined;
  csrfToken: unknown;
}

/** The pending request, or why there is none to act on. */
export type PendingRequest =
  | { kind: 'ok'; request: StoredAuthorizationRequest; browserId: string; handle: string }
  /** A form posted from another origin. */
  | { kind: 'foreign-origin' }
  /** No such request for this browser: expired, completed, altered or another browser's. */
  | { kind: 'expired' }
  /** A form whose CSRF token does not match the request and browser. */
  | { kind: 'unverified' };

/**
 * Opens the pending request `handle` for the browser with secret cookie `browserId`. With `form` (a
 * posted form) the form must come from `authOrigin` (or name no origin) and carry the request's
 * CSRF token; the user then acts, so the request is stored from now on (and can be completed only
 * once).
 */
export async function openPendingRequest(
  deps: RequestHandleDeps & { authOrigin: string },
  handle: unknown,
  browserId: string | undefined,
  form?: PostedForm,
): Promise<PendingRequest> {
  if (form && form.origin !== undefined && form.origin !== deps.authOrigin) return { kind: 'foreign-origin' };
  const request = await loadAuthorizationRequest(deps, handle, browserId);
  if (!request || !browserId || typeof handle !== 'string') return { kind: 'expired' };
  if (form && !csrfTokenValid(browserId, handle, form.csrfToken)) return { kind: 'unverified' };
  if (form) await storeOnFirstUse(deps, handle, request, browserId);
  return { kind: 'ok', request, browserId, handle };
}
