/** Errors the client throws. */

/** One item of the service's error body (docs/api/errors.md). */
export interface ApiErrorItem {
  field?: string;
  message: string;
}

/** A non-2xx answer from the API or the token endpoint. */
export class CarebookError extends Error {
  override readonly name = 'CarebookError';
  constructor(
    message: string,
    /** HTTP status. */
    readonly status: number,
    /** `request_id` of the error body, or the `x-request-id` header. */
    readonly requestId: string | undefined,
    /** `error_type` (`api_error`, `invalid_request`) or the OAuth `error` code. */
    readonly errorType: string | undefined,
    /** The `errors` array of the error body (docs/api/errors.md) (empty for OAuth errors). */
    readonly errors: ApiErrorItem[],
    /** The parsed body as received. */
    readonly body: unknown,
  ) {
    super(message);
  }
}

/**
 * Builds a `CarebookError` from a failed response and its parsed body (either the API's error body
 * or an RFC 6749 `{error, error_description}` body).
 */
export function errorFromResponse(response: Response, body: unknown): CarebookError {
  const b = (body ?? {}) as { request_id?: string; error_type?: string; errors?: ApiErrorItem[]; error?: string; error_description?: string };
  const errors = Array.isArray(b.errors) ? b.errors : [];
  const detail = errors.length ? errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join('; ') : (b.error_description ?? b.error ?? response.statusText);
  return new CarebookError(
    `${response.status} ${detail}`,
    response.status,
    b.request_id ?? response.headers.get('x-request-id') ?? undefined,
    b.error_type ?? b.error,
    errors,
    body,
  );
}
