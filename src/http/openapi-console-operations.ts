/**
 * The Console API's operations (`/console/v1`, docs/decisions/0015-developer-console.md,
 * docs/console.md) for the OpenAPI document: a stable `operationId` and a description of each,
 * merged into `OPERATIONS` (src/http/openapi-operations.ts).
 */

/** The Console API's operation ids and descriptions, keyed by `METHOD path`. */
export const CONSOLE_OPERATIONS: Record<string, { operationId: string; description: string }> = {
  'GET /console/v1/me': {
    operationId: 'getConsoleAccount',
    description: 'The signed-in console account: its e-mail address, the developer accounts it owns (sandbox and, once granted, production) and where its production access stands (`none`, `pending`, `granted`, `refused`).',
  },
  'GET /console/v1/apps': {
    operationId: 'listConsoleApps',
    description: 'Every app of the developer accounts the caller owns, oldest first, each with its machine credential and user client (kind, client id, scopes, redirect URIs, rotation and revocation times). Never a secret.',
  },
  'POST /console/v1/apps': {
    operationId: 'createConsoleApp',
    description: 'Creates an app for one of the caller\'s developer accounts (`developer_id`, or the only one): a machine credential with every client-credentials scope and a user client with the given redirect URIs (checked as at the operator\'s `developer create`: https except loopback in production). The machine secret is in this answer only. 400 names every bad field.',
  },
  'GET /console/v1/apps/{app_id}': {
    operationId: 'getConsoleApp',
    description: 'One app and its clients. A machine secret nobody has seen yet (the one made at sign-up, or by the operator\'s production grant) is replaced now and shown in this answer only; every later read shows none. 404 for an app that is not the caller\'s.',
  },
  'PUT /console/v1/apps/{app_id}/redirect_uris': {
    operationId: 'setConsoleAppRedirectUris',
    description: 'Replaces the user client\'s redirect URIs (checked as at creation; an empty list stops its sign-ins). Sign-ins already started with a removed URI get the sign-in error page. 404 for an app that is not the caller\'s.',
  },
  'POST /console/v1/apps/{app_id}/credentials/{client_id}/rotate': {
    operationId: 'rotateConsoleAppSecret',
    description: 'Gives the app\'s machine credential a new secret, shown in this answer only. With `grace_period_seconds` (at most 86,400) the old secret keeps working until then, so running services can switch over; with 0 it stops at once. Tokens already issued run to their expiry. 409 for a user client or a revoked one; 404 for a client that is not the caller\'s.',
  },
  'DELETE /console/v1/apps/{app_id}/credentials/{client_id}': {
    operationId: 'revokeConsoleAppClient',
    description: 'Revokes one of the app\'s clients: it gets no more tokens (token endpoint, sign-in page, anonymous tokens), and its users\' tokens and refresh tokens stop at once; machine access tokens already issued run to their expiry (at most 60 minutes). Revoking again changes nothing. 404 for a client that is not the caller\'s.',
  },
  'POST /console/v1/production-request': {
    operationId: 'requestProductionAccess',
    description: 'Asks the operator for production access, with the company and the intended use. 409 when the account has no sandbox developer, already has a request pending, or already has production access.',
  },
  'GET /console/v1/developers/{developer_id}/request-log': {
    operationId: 'readConsoleRequestLog',
    description: 'Your developer\'s API calls of the last 7 days (at most the newest 10,000), newest first: method, path without query values, status, latency, `request_id` and a refused call\'s error body. Search by `request_id`, filter by `status`, page with `next_cursor`.',
  },
  'GET /console/v1/developers/{developer_id}/usage': {
    operationId: 'readConsoleUsage',
    description: 'Requests, errors and error rate per app and UTC day for the last `days` days, each with the app\'s clients, and the rate-limit headroom: your limit per minute against your calls of the last minute, in all, per app and per client.',
  },
  'POST /console/v1/developers/{developer_id}/sandbox/reset': {
    operationId: 'resetConsoleSandbox',
    description: 'Deletes your sandbox appointments, patients, attachments, webhook events and deliveries, Idempotency-Key records and request log in one transaction, and answers how many of each went. Refused in production.',
  },
  'GET /console/v1/developers/{developer_id}/sandbox/fixtures': {
    operationId: 'listConsoleSandboxFixtures',
    description: 'The sandbox\'s fixture provider-locations, the fixed outcome of each, and whether a webhook follows. Refused in production.',
  },
  'POST /console/v1/developers/{developer_id}/sandbox/fixtures/{name}/run': {
    operationId: 'runConsoleSandboxFixture',
    description: 'Books a test patient at a fixture\'s next free time with your machine credential, so its fixed outcome follows with its webhook. Refused in production.',
  },
  'PUT /console/v1/developers/{developer_id}/webhook': {
    operationId: 'setConsoleWebhook',
    description: 'Sets your webhook receiver\'s URL and signing key; without a key one is generated and shown once. The URL follows the outbound address rules.',
  },
  'GET /console/v1/developers/{developer_id}/webhook': {
    operationId: 'getConsoleWebhook',
    description: 'Your webhook receiver\'s URL and whether a replaced key still signs; never the key.',
  },
  'POST /console/v1/developers/{developer_id}/webhook/test': {
    operationId: 'sendConsoleTestEvent',
    description: 'Sends one signed `test` event to your receiver now and answers what it answered; the attempt appears in the delivery log.',
  },
  'GET /console/v1/developers/{developer_id}/webhook/deliveries': {
    operationId: 'listConsoleDeliveries',
    description: 'Your webhook delivery attempts, newest first, with status code, latency, error and the first bytes of the receiver\'s answer; filter by appointment and status.',
  },
  'POST /console/v1/developers/{developer_id}/webhook/deliveries/{event_id}/replay': {
    operationId: 'replayConsoleDelivery',
    description: 'Makes one of your delivered, failed or undelivered events due again; the delivery worker sends it within seconds.',
  },
  'POST /console/v1/developers/{developer_id}/webhook/replays': {
    operationId: 'replayConsoleFailedDeliveries',
    description: 'Makes every failed or undelivered event since a time due again; answers how many.',
  },
};
