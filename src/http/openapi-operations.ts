/**
 * What the OpenAPI document says about each operation beyond its route schema, in one place: a
 * stable `operationId` (the typed client's method names) and a description, the document's tag
 * list, and the statuses every operation can answer (docs/api/errors.md, "Statuses"), added where
 * a route schema does not list them. `npm run lint:openapi` (Redocly, Spectral) keeps it complete.
 */
import { CONSOLE_OPERATIONS } from './openapi-console-operations.js';
import { PRACTICE_OPERATIONS } from './openapi-practice-operations.js';

/** The operation's id and description, keyed by `METHOD path`. */
export const OPERATIONS: Record<string, { operationId: string; description: string }> = {
  'POST /auth/oauth/token': {
    operationId: 'issueToken',
    description: 'The OAuth 2 token endpoint (RFC 6749 §3.2): client credentials for a machine credential, authorization code with PKCE and refresh token for a user client. Client authentication by HTTP Basic or in the form. Errors follow RFC 6749 §5.2, not the API error body.',
  },
  'GET /auth/authorize': {
    operationId: 'authorize',
    description: 'The authorization endpoint (RFC 6749 §4.1.1) for the authorization code flow with PKCE (S256 only): shows the sign-in page, then the consent page, and redirects to the client with a code. Opened in the user\'s browser, not called by a program. Throttled per client address.',
  },
  'GET /auth/.well-known/jwks.json': {
    operationId: 'getJwks',
    description: 'The public keys that verify access tokens (RFC 7517), including the previous key during a rotation. Cache them by `kid`.',
  },
  'GET /auth/.well-known/oauth-authorization-server': {
    operationId: 'getAuthorizationServerMetadata',
    description: 'Authorization server metadata (RFC 8414): endpoints, grant types, PKCE methods and scopes.',
  },
  'POST /v1/appointments': {
    operationId: 'createAppointment',
    description: 'Books an appointment for a patient at a start time the availability endpoint offers for the provider-location, visit reason and patient type. The time is held at once (a second booking of it answers 409); the appointment starts `pending_booking` and is confirmed by the provider (manual locations) or the service. Every bad field is named in one 400. Send an `Idempotency-Key` to retry safely.',
  },
  'GET /v1/appointments': {
    operationId: 'listAppointments',
    description: 'Lists the appointments the token may see (a machine credential: its developer\'s; a user: their own), filtered by status, time, patient and provider, sorted and paginated; at most 1,000 are reachable.',
  },
  'GET /v1/appointments/{appointment_id}': {
    operationId: 'getAppointment',
    description: 'Reads one appointment with its patient, provider-location and status. Answers 404 for an appointment the token may not see. Every read is recorded in the audit log.',
  },
  'GET /v1/appointments/{appointment_id}/participants': {
    operationId: 'getAppointmentParticipants',
    description: 'Reads the participants of an appointment: the patient as booked. Audited like a read of the appointment.',
  },
  'POST /v1/appointments/confirm': {
    operationId: 'confirmAppointment',
    description: 'Confirms a `pending_booking` appointment at a location that confirms manually. 409 when the appointment is in another state.',
  },
  'POST /v1/appointments/cancel': {
    operationId: 'cancelAppointment',
    description: 'Cancels an appointment and releases its time. A free-text `cancellation_reason` is taken only with the reason types `other_patient_reason` and `other_provider_reason`.',
  },
  'POST /v1/appointments/reschedule': {
    operationId: 'rescheduleAppointment',
    description: 'Moves an appointment to another start time the availability endpoint offers for it; only the time changes. The new time is held at once, the old one until the move is confirmed (`pending_reschedule`, then `rescheduled` or `reschedule_failed`).',
  },
  'PUT /v1/appointments/update-status': {
    operationId: 'updateAppointmentStatus',
    description: 'Records that the patient arrived, or marks a no-show (from the start time until two days after it).',
  },
  'GET /v1/provider_locations/availability': {
    operationId: 'getAvailability',
    description: 'Bookable start times of up to 50 provider-locations for a visit reason and patient type, in each provider\'s own UTC offset, over a window of at most 31 days (default: a week from today in the provider\'s zone), with the first availability after the window when it has none.',
  },
  'GET /v1/providers/{provider_id}/calendar/timeslots': {
    operationId: 'getCalendarTimeslots',
    description: 'Reads the timeslots pushed for a provider on one local date, paginated with a cursor. For a machine credential whose directory holds the provider, or the provider\'s own user.',
  },
  'PUT /v1/providers/{provider_id}/calendar/timeslots': {
    operationId: 'replaceCalendarTimeslots',
    description: 'Replaces every timeslot of a provider on one local date (an empty list or body erases them). Local times are in the slot\'s IANA zone; a time that does not exist there (a daylight-saving gap) is refused. Slots at locations the caller may not manage are skipped and reported.',
  },
  ...PRACTICE_OPERATIONS,
  ...CONSOLE_OPERATIONS,
  'GET /admin/v1/production-requests': {
    operationId: 'listProductionRequests',
    description: 'The console accounts\' production requests, oldest first, optionally of one `status`.',
  },
  'POST /admin/v1/production-requests/{request_id}/grant': {
    operationId: 'grantProductionRequest',
    description: 'Grants a pending production request: creates the production developer (named after the company) owned by the requesting account, with one app whose machine secret the account sees once in the console (the operator never sees it). Where `PRODUCTION_DATABASE_URL` names the production deployment\'s own database, they are written there, with a console login for the account (same e-mail address and password), and `production_console_url` says where it signs in. 404 for an unknown request; 409 for one already decided; 503 when the production database cannot be written (the request stays pending).',
  },
  'POST /admin/v1/production-requests/{request_id}/refuse': {
    operationId: 'refuseProductionRequest',
    description: 'Refuses a pending production request with a `reason` the account reads in its console; the account may then ask again. 400 naming `reason`; 404 for an unknown request; 409 for one already decided.',
  },
  'POST /admin/v1/practices/{practice_id}/admins': {
    operationId: 'adminCreatePracticeAdmin',
    description: 'Creates an admin of a practice of the directory. With `password` the admin can sign in to the practice workspace at once; without, the answer carries a one-time `invitation_url` (7 days, shown once) whose page sets the password. 404 for a practice not in the directory; 400 for an e-mail address that already has an account.',
  },
  'PUT /admin/v1/developers/{developer_id}/webhook': {
    operationId: 'adminSetWebhook',
    description: 'Sets a developer\'s webhook receiver and signing key. A new key becomes current; the previous one keeps signing for 24 hours, so the receiver can switch without losing events.',
  },
  'GET /admin/v1/webhook-deliveries': {
    operationId: 'adminListWebhookDeliveries',
    description: 'Lists a developer\'s webhook delivery attempts, newest first: event, receiver, status code, latency and error.',
  },
  'POST /admin/v1/webhook-replays': {
    operationId: 'adminReplayWebhooks',
    description: 'Queues again every delivered, failed or undelivered (no receiver) event of a developer since a time.',
  },
  'GET /admin/v1/developers/{developer_id}/request-log': {
    operationId: 'adminReadRequestLog',
    description: 'A developer\'s API calls of the last 7 days (at most the newest 10,000), newest first: method, path without query values, status, latency, request id and, for a refused call, its error body. Search by `request_id`; filter by `status`.',
  },
  'PUT /admin/v1/developers/{developer_id}/rate-limit': {
    operationId: 'adminSetRateLimit',
    description: 'Overrides a developer\'s requests-per-minute limit (null restores the default). Takes effect on every process within seconds.',
  },
  'POST /admin/v1/developers': {
    operationId: 'adminCreateDeveloper',
    description: 'Onboards a developer: a machine credential (client id and secret, shown once) and a public user client with its redirect URIs.',
  },
  'POST /admin/v1/users': {
    operationId: 'adminCreateUser',
    description: 'Creates a patient login, or a provider login tied to a provider of the directory. Every bad field is named in one 400.',
  },
  'POST /admin/v1/directory/import': {
    operationId: 'adminImportDirectory',
    description: 'Imports a directory document (JSON, or NDJSON with one record a line) into the environment, optionally into a developer\'s directory. Errors name the record and line.',
  },
  'POST /admin/v1/directory/seed': {
    operationId: 'adminSeedDirectory',
    description: 'Generates a realistic directory of the given size from a seed (the same seed gives the same directory).',
  },
  'POST /admin/v1/appointments/{appointment_id}/transition': {
    operationId: 'adminTransitionAppointment',
    description: 'Moves an appointment as the provider or the service would (confirm, fail, cancel, complete or fail a reschedule); the booking developer receives the webhook.',
  },
  'GET /v1/reference/npi': {
    operationId: 'listNpis',
    description: 'Lists the NPIs of the active providers in the caller\'s directory, paginated.',
  },
  'GET /v1/specialties': { operationId: 'listSpecialties', description: 'Lists the specialties of the environment, paginated.' },
  'GET /v1/specialties/{specialty_id}': { operationId: 'getSpecialty', description: 'Reads one specialty with its default visit reason.' },
  'GET /v1/visit_reasons': { operationId: 'listVisitReasons', description: 'Lists the visit reasons of the environment, optionally of one specialty, paginated.' },
  'GET /v1/visit_reasons/{visit_reason_id}': { operationId: 'getVisitReason', description: 'Reads one visit reason: its name and specialty.' },
  'GET /v1/insurance_plans': { operationId: 'listInsurancePlans', description: 'Lists insurance plans, filtered by status, state, plan (network) type, program type and care category, paginated.' },
  'GET /v1/insurance_plans/{insurance_plan_id}': { operationId: 'getInsurancePlan', description: 'Reads one insurance plan with its carrier and coverage area.' },
  'GET /v1/schedulable_entities': {
    operationId: 'listSchedulableEntities',
    description: 'Lists the provider-locations of the caller\'s directory with their next availability, paginated; `recent_changes_72hrs` lists only those changed in the last 72 hours.',
  },
  'GET /v1/providers': {
    operationId: 'searchProvidersByNpi',
    description: 'Finds providers of the caller\'s directory by up to 50 NPIs, each with its provider-locations; with `insurance_plan_id`, whether each takes the plan.',
  },
  'GET /v1/provider_locations': {
    operationId: 'searchProviderLocations',
    description: 'Searches provider-locations of the caller\'s directory near a ZIP code, nearest first, by specialty or visit reason, visit type, distance and insurance plan, paginated.',
  },
  'GET /v1/provider_locations/{provider_location_id}': {
    operationId: 'getProviderLocation',
    description: 'Reads one provider-location of the caller\'s directory: provider, location, visit reasons, booking requirements and next availability.',
  },
  'GET /v1/provider_locations/{provider_location_id}/insurance_mappings': {
    operationId: 'getInsuranceMappings',
    description: 'Reads the insurance plans a provider-location takes and the plans it could take. 409 while a change is being applied.',
  },
  'POST /v1/provider_locations/{provider_location_id}/insurance_mappings': {
    operationId: 'requestInsuranceMappingChange',
    description: 'Requests a change to the insurance plans a provider-location takes (add, remove or replace); applied asynchronously (202). In the sandbox, refused for provider-locations other developers\' directories also hold.',
  },
  'GET /v1-beta/facilities': {
    operationId: 'searchFacilities',
    description: 'Finds facilities (clinics, hospitals) of the caller\'s directory by NPI or near a ZIP code, paginated. Beta: may change.',
  },
  'GET /v1-beta/facilities/{facility_id}': { operationId: 'getFacility', description: 'Reads one facility of the caller\'s directory. Beta: may change.' },
  'POST /v1/token/anonymous-user': {
    operationId: 'issueAnonymousToken',
    description: 'Issues a short-lived anonymous token for one end user of the caller\'s app, for directory and availability reads from a browser. The token is never stored or replayed by Idempotency-Key.',
  },
  'POST /v1/credentials/rotate': {
    operationId: 'rotateClientSecret',
    description: 'Rotates the secret of the calling machine credential: the new secret is returned once and the old one stops working. A repeated Idempotency-Key answers 409; the secret is never replayed.',
  },
  'POST /v1/webhook/mock-request': {
    operationId: 'sendMockWebhook',
    description: 'Sends one signed example webhook to a URL and returns the exact body sent (sandbox only). The receiver\'s status is reported in `Webhook-Delivery-Status` for public receivers only.',
  },
  'POST /v1/appointments/{appointment_id}/attachments': {
    operationId: 'uploadAttachment',
    description: 'Uploads a file (JPEG, PNG, PDF or DOCX, under 10 MB, checked by content) to an appointment, as multipart form data. Not for failed appointments or more than 7 days after the start.',
  },
  'GET /v1/appointments/{appointment_id}/attachments/{attachment_id}': {
    operationId: 'downloadAttachment',
    description: 'Downloads an attachment of an appointment the token may see, with its stored content type. Bytes that no longer match the size and SHA-256 recorded at upload are never served: 409 naming `attachment_id` (upload the file again).',
  },
};

/** The document's tags, in the order the reference shows them. */
export const TAGS = [
  { name: 'auth', description: 'OAuth 2 tokens, the sign-in flow, signing keys, anonymous tokens and secret rotation.' },
  { name: 'directory', description: 'Providers and provider-locations of your directory: search, read, insurance mappings.' },
  { name: 'reference', description: 'Specialties, visit reasons, insurance plans and NPIs.' },
  { name: 'availability', description: 'Bookable start times.' },
  { name: 'appointments', description: 'Book, read, confirm, cancel, reschedule and attach files to appointments.' },
  { name: 'calendar', description: 'Timeslots pushed by a provider\'s calendar system.' },
  { name: 'webhooks', description: 'Signed notifications of appointment changes; a mock delivery in the sandbox.' },
  { name: 'facilities (beta)', description: 'Clinics and hospitals of your directory. Beta: may change.' },
  { name: 'practice', description: 'The Practice API: a practice\'s staff run its calendars, appointments, schedules and staff (a token of the practice workspace client).' },
  { name: 'console', description: 'The Console API: a developer\'s own account, apps, credentials and production access (a token of the developer console client).' },
  { name: 'admin', description: 'The operator\'s API (an `ADMIN_TOKEN` bearer): developers, users, directory, webhooks, limits, provider-side moves.' },
];

/** Shared responses, referenced from every operation that can answer them. */
export const COMMON_RESPONSES: Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, unknown> }> = {
  BadRequest: errorResponse('The request is malformed; `errors` names every bad field (schema, format and references) in one answer.'),
  Unauthorized: errorResponse('No token, or one that is invalid, expired or revoked; `WWW-Authenticate` says which.'),
  Forbidden: errorResponse('The token lacks the scope the operation needs, or may not act on this resource.'),
  UriTooLong: errorResponse('A path parameter is longer than the service takes.'),
  PayloadTooLarge: errorResponse('The request body is larger than the operation takes; the connection is closed after the answer.'),
  UnsupportedMediaType: errorResponse('The body\'s content type is not one the operation takes.'),
  HeadersTooLarge: { description: 'The request\'s headers (with the URL) exceed 16 KB; answered without a body and the connection closed.' },
  TooManyRequests: errorResponse('Too many requests; wait for `Retry-After` seconds.', { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } }),
  ServiceUnavailable: errorResponse('The database is unavailable or the service is shutting down; retry after `Retry-After` seconds.', { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } }),
};

function errorResponse(description: string, headers?: Record<string, unknown>) {
  return { description, ...(headers ? { headers } : {}), content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } };
}

/** The error body shared by every error answer (docs/api/errors.md). */
export const ERROR_BODY_SCHEMA = {
  type: 'object',
  required: ['request_id', 'error_type', 'errors'],
  properties: {
    request_id: { type: 'string', description: 'The `X-Request-Id` of the answer' },
    error_type: { type: 'string', enum: ['api_error', 'invalid_request'] },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['message'],
        properties: { field: { type: 'string', description: 'The input at fault, as a dotted path' }, message: { type: 'string' } },
      },
    },
  },
  example: { request_id: '9f0c6a51-3f0e-4a57-9a63-0d2f3c7f4b1e', error_type: 'invalid_request', errors: [{ field: 'data.patient.phone_number', message: 'first digit must not be 0 or 1' }] },
};

type Op = {
  operationId?: string;
  description?: string;
  security?: unknown[];
  parameters?: { in: string }[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
};

/**
 * Completes every operation of `doc` in place: its id and description from `OPERATIONS`, and the
 * statuses it can answer that its route schema does not list (400 for any input, 401/403 with a
 * token, 413/415 with a body, 414 with path parameters, 429 where throttled, 431 and 503 always).
 * The OAuth endpoints (`/auth/*`) keep their own error bodies (RFC 6749 §5.2; HTML pages).
 */
export function completeOperations<T extends object>(doc: T): T {
  const d = doc as { tags?: unknown; paths?: Record<string, Record<string, Op>>; components?: { responses?: Record<string, unknown> } };
  d.tags = TAGS;
  const used = new Set<string>();
  const ref = (name: string) => {
    used.add(name);
    return { $ref: `#/components/responses/${name}` };
  };
  for (const [path, item] of Object.entries(d.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      if (!op || typeof op !== 'object' || !op.responses) continue;
      const known = OPERATIONS[`${method.toUpperCase()} ${path}`];
      if (known) Object.assign(op, known);
      const add = (status: string, name: string) => {
        if (!op.responses![status]) op.responses![status] = ref(name);
      };
      const oauth = path.startsWith('/auth/');
      const hasInput = Boolean(op.requestBody) || (op.parameters?.length ?? 0) > 0;
      if (!oauth) {
        if (hasInput) add('400', 'BadRequest');
        add('401', 'Unauthorized');
        if (!path.startsWith('/admin/')) add('403', 'Forbidden');
        if (op.requestBody) {
          add('413', 'PayloadTooLarge');
          add('415', 'UnsupportedMediaType');
        }
        if (op.parameters?.some((p) => p.in === 'path')) add('414', 'UriTooLong');
        add('429', 'TooManyRequests');
      }
      if (path === '/auth/authorize') {
        const page = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
        op.responses['400'] ??= page('An authorization request that cannot be sent back to the client (unknown client, unregistered redirect URI): an error page.');
        op.responses['429'] ??= page('Too many authorization requests from this address: an error page, with `Retry-After`.');
      }
      add('431', 'HeadersTooLarge');
      add('503', 'ServiceUnavailable');
    }
  }
  // Only the shared responses some operation refers to (a document without the admin API may not use all).
  for (const name of Object.keys(d.components?.responses ?? {})) if (!used.has(name)) delete d.components!.responses![name];
  return doc;
}
