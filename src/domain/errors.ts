/**
 * The errors domain code (and the layers above it) throw, typed by what went wrong, never by how an
 * HTTP answer says so: `src/http/domain-error-mapping.ts` is the one place that turns a kind into a
 * status, an `error_type` and headers. The field errors are what the API returns in `errors`.
 */

/** One problem of a request: the field it concerns (when one does) and what is wrong with it. */
export interface FieldError {
  field?: string;
  message: string;
}

/**
 * What went wrong:
 * - `invalid`: the input breaks a rule (a format, a reference, a limit); `errors` names every field;
 * - `not_found`: the thing named does not exist for the caller;
 * - `conflict`: the thing exists but its state refuses the action (a taken time, a finished appointment);
 * - `authentication_required`: the caller presented no credential at all;
 * - `unauthorized`: the credential presented is malformed, invalid or expired;
 * - `forbidden`: the caller's credential does not allow the action (`scope`: the one it lacks, when one would);
 * - `refused`: the action is refused whoever asks, to protect others (a sandbox row other developers share);
 * - `unsupported_media_type`: the body is not of a type the operation takes;
 * - `rate_limited`: the caller made too many attempts; it may try again after `retryAfterSeconds`;
 * - `unavailable`: the service could not do it now (not the caller's fault); try again after `retryAfterSeconds`.
 */
export type ErrorKind =
  | 'invalid'
  | 'not_found'
  | 'conflict'
  | 'authentication_required'
  | 'unauthorized'
  | 'forbidden'
  | 'refused'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'unavailable';

/** What some kinds carry besides their field errors. */
export interface ErrorDetails {
  /** `forbidden`: the scope the credential lacks. */
  scope?: string;
  /** `rate_limited`, `unavailable`: when to try again. */
  retryAfterSeconds?: number;
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

/** An error the API reports to its caller. Throw it from domain code, handlers and hooks alike. */
export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly errors: FieldError[],
    readonly details: ErrorDetails = {},
  ) {
    super(errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join('; '));
    this.name = 'DomainError';
  }
}

const one = (message: string, field?: string): FieldError[] => [field ? { field, message } : { message }];

/** Input breaking one rule (`field`: the one concerned, when there is one). */
export const invalidInput = (field: string | undefined, message: string): DomainError => new DomainError('invalid', one(message, field));

/** Input breaking several rules: every bad field at once. */
export const invalidFields = (errors: FieldError[]): DomainError => new DomainError('invalid', errors);

/** The thing named does not exist for the caller. */
export const notFound = (message: string, field?: string): DomainError => new DomainError('not_found', one(message, field));

/** The thing's state refuses the action. */
export const conflict = (message: string, field?: string): DomainError => new DomainError('conflict', one(message, field));

/** A credential that is malformed, invalid or expired. */
export const unauthorized = (message: string): DomainError => new DomainError('unauthorized', [{ message }]);

/** No credential at all. */
export const authenticationRequired = (message: string): DomainError => new DomainError('authentication_required', [{ message }]);

/** The credential does not allow this (`scope`: the one it lacks, when one scope would). */
export const forbidden = (scope: string | undefined, message: string): DomainError =>
  new DomainError('forbidden', [{ message }], scope ? { scope } : {});

/** A sandbox write to a provider-location other developers share (docs/decisions/0007). */
export const sharedInSandbox = (field: string, message: string): DomainError => new DomainError('refused', [{ field, message }]);

/** A body of a type the operation does not take. */
export const unsupportedMediaType = (message: string): DomainError => new DomainError('unsupported_media_type', [{ message }]);

/** Too many attempts; another is welcome after `retryAfterSeconds`. */
export const rateLimited = (message: string, retryAfterSeconds: number): DomainError =>
  new DomainError('rate_limited', [{ message }], { retryAfterSeconds });

/** Not possible now, through no fault of the caller; try again after `retryAfterSeconds`. */
export const unavailable = (message: string, retryAfterSeconds: number): DomainError =>
  new DomainError('unavailable', [{ message }], { retryAfterSeconds });
