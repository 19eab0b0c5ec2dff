/** Request and response schemas of the credential operations (docs/api/auth.md). */
import { Type } from 'typebox';

/** The error body of docs/api/errors.md#error-body. */
export const ErrorBody = Type.Object({
  request_id: Type.String(),
  error_type: Type.Union([Type.Literal('api_error'), Type.Literal('invalid_request')]),
  errors: Type.Array(Type.Object({ field: Type.Optional(Type.String()), message: Type.String() })),
});

export const AnonymousTokenBody = Type.Object({
  app_client_id: Type.String({ minLength: 1, maxLength: 200, description: "One of your developer account's OAuth client ids (usually the user client of your app)" }),
});

export const AnonymousTokenResponse = Type.Object({
  request_id: Type.String(),
  data: Type.Object({
    access_token: Type.String({ description: 'A JWT for directory and reference reads only' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds until the token expires (3600)' }),
  }),
});

export const RotateBody = Type.Object({
  application_client_id: Type.String({ minLength: 1, maxLength: 200, description: 'A confidential (machine-to-machine) client of your developer account' }),
});

export const RotateResponse = Type.Object({
  request_id: Type.String(),
  data: Type.Object({
    application_client_id: Type.String(),
    client_secret: Type.String({ description: 'The new secret; shown once. The old secret stops working at once.' }),
  }),
});
