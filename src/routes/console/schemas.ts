/** TypeBox schemas of the Console API (docs/console.md). */
import { Type } from 'typebox';

const DateTime = Type.String({ format: 'date-time' });
const NullableDateTime = Type.Union([DateTime, Type.Null()]);
const EnvSchema = Type.Union([Type.Literal('sandbox'), Type.Literal('production')]);

export const AppIdParams = Type.Object({ app_id: Type.String({ minLength: 1, maxLength: 100 }) });
export const ClientParams = Type.Object({ app_id: Type.String({ minLength: 1, maxLength: 100 }), client_id: Type.String({ minLength: 1, maxLength: 100 }) });

export const RedirectUris = Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
  maxItems: 20,
  description: 'Absolute http(s) URLs without fragment; in production https, or http to a loopback address only',
  examples: [['https://app.example.org/callback', 'http://127.0.0.1:3000/callback']],
});

export const Client = Type.Object({
  kind: Type.Union([Type.Literal('machine'), Type.Literal('user')], { description: '`machine`: the machine-to-machine credential (client credentials, has a secret); `user`: the public user client (authorization code + PKCE)' }),
  client_id: Type.String(),
  scopes: Type.Array(Type.String()),
  redirect_uris: Type.Array(Type.String(), { description: 'The user client\'s; empty for a machine credential' }),
  created_at: DateTime,
  secret_rotated_at: NullableDateTime,
  previous_secret_expires_at: Type.Union([DateTime, Type.Null()], { description: 'While an overlapping rotation runs: until when the previous secret still works' }),
  revoked_at: NullableDateTime,
  client_secret: Type.Optional(Type.String({ description: 'The machine secret, in this answer only: after creation or rotation, or at the first read of a secret never shown. Store it now: it is never shown again.' })),
});

export const App = Type.Object({
  app_id: Type.String(),
  name: Type.String(),
  developer_id: Type.String(),
  env: EnvSchema,
  created_at: DateTime,
  clients: Type.Array(Client),
});

export const NewAppBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200, examples: ['Booking app'] }),
  developer_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The developer account the app is for; may be left out when the account owns one only' })),
  redirect_uris: Type.Optional(RedirectUris),
});

export const RotateBody = Type.Object({
  grace_period_seconds: Type.Integer({ minimum: 0, maximum: 86_400, default: 0, description: 'How long the old secret keeps working (0: it stops at once; at most 24 h)' }),
});

export const RedirectUrisBody = Type.Object({ redirect_uris: RedirectUris });

export const Me = Type.Object({
  user_id: Type.String(),
  email: Type.String(),
  developers: Type.Array(Type.Object({ developer_id: Type.String(), name: Type.String(), env: EnvSchema, created_at: DateTime }), { description: 'The developer accounts this account owns, oldest first' }),
  production: Type.Object({
    status: Type.Union([Type.Literal('none'), Type.Literal('pending'), Type.Literal('granted'), Type.Literal('refused')]),
    request_id: Type.Union([Type.String(), Type.Null()]),
    requested_at: NullableDateTime,
    decided_at: NullableDateTime,
    refusal_reason: Type.Union([Type.String(), Type.Null()], { description: 'The operator\'s reason, when the latest request was refused' }),
    console_url: Type.Union([Type.String(), Type.Null()], {
      description: 'Granted into a production deployment with its own database: its console, where the same e-mail address and password sign in; null otherwise',
    }),
  }),
});

export const ProductionRequestBody = Type.Object({
  company: Type.String({ minLength: 1, maxLength: 200, examples: ['Example Health Inc.'] }),
  use_case: Type.String({ minLength: 1, maxLength: 2000, examples: ['Online booking for our members'] }),
});

export const ProductionRequest = Type.Object({
  id: Type.String(),
  user_id: Type.String(),
  email: Type.String(),
  sandbox_developer_id: Type.String(),
  company: Type.String(),
  use_case: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('granted'), Type.Literal('refused')]),
  created_at: DateTime,
  decided_at: NullableDateTime,
  production_developer_id: Type.Union([Type.String(), Type.Null()]),
  refusal_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why the operator refused the request; null unless refused' }),
  production_console_url: Type.Union([Type.String(), Type.Null()], {
    description: 'Where the account signs in to its production console (the same e-mail address and password), when production runs on its own database; null otherwise',
  }),
});
