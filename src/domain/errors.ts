/**
 * The one error model of the API (interface.md §7, contracts.md §8): every error answers
 * `{request_id, error_type, errors: [{field?, message}]}` with `request_id` equal to the
 * `x-request-id` header.
 */
export type ErrorType = 'api_error' | 'invalid_request';

export interface FieldError {
  field?: string;
  message: string;
}

export interface ErrorBody {
  request_id: string;
  error_type: ErrorType;
  errors: FieldError[];
}

/**
 * The errors of an earlier validation stage, then those of a later one for fields the earlier did
 * not already name (a field too long for the schema is not also reported as, say, not found), with
 * repeats dropped (docs/api/errors.md, "Validation").
 */
export function mergeFieldErrors(earlier: FieldError[], later: FieldError[]): FieldError[] {
  const named = new Set(earlier.map((e) => e.field).filter((f): f is string => f !== undefined));
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of [...earlier, ...later.filter((l) => l.field === undefined || !named.has(l.field))]) {
    const key = `${e.field ?? ''}\u0000${e.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(e);
  }
  return out;
}

/** An error that maps to a §7 error response. Throw it from handlers and domain code alike. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly errorType: ErrorType,
    readonly errors: FieldError[],
    readonly headers: Record<string, string> = {},
  ) {
    super(errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join('; '));
    this.name = 'ApiError';
  }
}

export const badRequest = (field: string | undefined, message: string): ApiError =>
  new ApiError(400, 'invalid_request', [field ? { field, message } : { message }]);

export const notFound = (message: string, field?: string): ApiError =>
  new ApiError(404, 'invalid_request', [field ? { field, message } : { message }]);

export const conflict = (message: string, field?: string): ApiError =>
  new ApiError(409, 'invalid_request', [field ? { field, message } : { message }]);

export const unauthorized = (message: string): ApiError =>
  new ApiError(401, 'invalid_request', [{ message }], {
    'www-authenticate': `Bearer error="invalid_token", error_description="${message.replace(/"/g, "'")}"`,
  });

/**
 * 401 for a request that carries no bearer token at all: `WWW-Authenticate: Bearer` with a realm and
 * no error code (RFC 6750 §3.1: a request without authentication information gets none).
 */
export const authenticationRequired = (message: string): ApiError =>
  new ApiError(401, 'invalid_request', [{ message }], { 'www-authenticate': 'Bearer realm="carebook"' });

export const forbidden = (scope: string | undefined, message: string): ApiError =>
  new ApiError(403, 'invalid_request', [{ message }], {
    'www-authenticate': scope
      ? `Bearer error="insufficient_scope", scope="${scope}"`
      : 'Bearer error="insufficient_scope"',
  });

/** 403 for a sandbox write to a provider-location other developers share (docs/decisions/0007). */
export const sharedInSandbox = (field: string, message: string): ApiError => new ApiError(403, 'invalid_request', [{ field, message }]);
