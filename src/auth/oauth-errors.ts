/**
 * Token-endpoint errors per RFC 6749 §5.2: `{error, error_description}`; `invalid_client` is 401
 * with `WWW-Authenticate` (docs/api/errors.md#errors-of-the-authorization-server), everything else 400.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error';

export class OAuthError extends Error {
  constructor(readonly error: OAuthErrorCode, readonly description: string) {
    super(description);
  }
  get statusCode(): number {
    return this.error === 'invalid_client' ? 401 : this.error === 'server_error' ? 500 : 400;
  }
}
