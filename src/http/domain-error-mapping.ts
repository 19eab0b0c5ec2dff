/**
 * The one place where a `DomainError` becomes an HTTP answer (docs/api/errors.md): its status, the
 * body's `error_type` and its headers (`WWW-Authenticate` for credential problems, RFC 6750 §3;
 * `Retry-After` for throttling and temporary failures).
 */
import type { DomainError, ErrorKind } from '../domain/errors.js';

/** The body's `error_type`: `api_error` when the service refuses for its own reasons, `invalid_request` when the request is at fault. */
export type ErrorType = 'api_error' | 'invalid_request';

/** How a domain error is answered. */
export interface HttpError {
  status: number;
  errorType: ErrorType;
  headers: Record<string, string>;
}

const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  authentication_required: 401,
  unauthorized: 401,
  forbidden: 403,
  refused: 403,
  not_found: 404,
  conflict: 409,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
};

/** A `Bearer error="…"` value may not contain a double quote (RFC 6750 §3). */
const quotable = (s: string): string => s.replace(/"/g, "'");

function headersOf(e: DomainError): Record<string, string> {
  switch (e.kind) {
    case 'unauthorized':
      return { 'www-authenticate': `Bearer error="invalid_token", error_description="${quotable(e.errors.map((x) => x.message).join('; '))}"` };
    case 'authentication_required':
      // RFC 6750 §3.1: a request without authentication information gets no error code.
      return { 'www-authenticate': 'Bearer realm="carebook"' };
    case 'forbidden':
      return { 'www-authenticate': e.details.scope ? `Bearer error="insufficient_scope", scope="${e.details.scope}"` : 'Bearer error="insufficient_scope"' };
    case 'rate_limited':
    case 'unavailable':
      return e.details.retryAfterSeconds !== undefined ? { 'retry-after': String(e.details.retryAfterSeconds) } : {};
    default:
      return {};
  }
}

/** The status, `error_type` and headers that answer `e`. */
export function httpErrorOf(e: DomainError): HttpError {
  const status = STATUS[e.kind];
  return { status, errorType: e.kind === 'rate_limited' || e.kind === 'unavailable' ? 'api_error' : 'invalid_request', headers: headersOf(e) };
}
