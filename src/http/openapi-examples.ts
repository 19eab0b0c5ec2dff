/**
 * Examples for the `/docs` reference, attached to the OpenAPI document in one place instead of in
 * every route schema. `EXAMPLES` holds hand-written examples keyed by `METHOD path`; every request
 * body and success response without one gets an example generated from its schema (field-name
 * aware, so ids, dates and phone numbers look real). `test/docs/openapi-examples.test.ts` checks
 * that every operation has a summary and examples, and that every example matches its schema.
 */

import { consoleExamples } from './openapi-console-examples.js';
import { practiceExamples } from './openapi-practice-examples.js';
import type { Json, OperationExamples } from './openapi-example-types.js';

export type { Json, OperationExamples };

/**
 * Directory ids are those of the demo directory a fresh sandbox creates (`npm start`), so examples
 * that name them work as written there (test/docs/openapi-examples-run.test.ts runs them). Values
 * that exist only once you have them (your client id and secret, an appointment you booked, a start
 * time the availability endpoint offers today) are placeholders or illustrations.
 */
const APPOINTMENT_ID = '7b1f2c9e-4d3a-4e8b-9c61-0f5a2d3e4b7c';
const PROVIDER_ID = 'pr_1_1';
const LOCATION_ID = 'lo_1_1_0';
const PL_ID = `${PROVIDER_ID}|${LOCATION_ID}`;
const VISIT_REASON_ID = 'pc_psychiatry_1';
const START_TIME = '2026-12-07T09:30:00-06:00';
const PATIENT: Json = {
  developer_patient_id: 'patient-1042',
  first_name: 'Ada',
  last_name: 'Lovelace',
  date_of_birth: '1990-05-17',
  sex_at_birth: 'female',
  phone_number: '2125550123',
  email_address: 'ada@example.org',
  patient_address: { address1: '350 5th Ave', city: 'New York', state: 'NY', zip_code: '10118' },
  insurance: { is_self_pay: true },
};

/** Hand-written examples; anything missing here is generated from the schema. */
export const EXAMPLES: Record<string, OperationExamples> = {
  'POST /auth/oauth/token': {
    request: { grant_type: 'client_credentials', client_id: '<CLIENT_ID>', client_secret: '<CLIENT_SECRET>', audience: 'http://127.0.0.1:8080/' },
    response: { access_token: 'eyJhbGciOiJFUzI1NiIsImtpZCI6Ii4uLiJ9.eyJzdWIiOiIuLi4ifQ.c2lnbmF0dXJl', token_type: 'Bearer', expires_in: 3600, scope: 'external.appointment.read external.appointment.write' },
  },
  'GET /auth/.well-known/jwks.json': {
    response: { keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1', alg: 'ES256', use: 'sig' }] },
  },
  'GET /auth/.well-known/oauth-authorization-server': {
    response: {
      issuer: 'http://127.0.0.1:8080/auth',
      authorization_endpoint: 'http://127.0.0.1:8080/auth/authorize',
      token_endpoint: 'http://127.0.0.1:8080/auth/oauth/token',
      jwks_uri: 'http://127.0.0.1:8080/auth/.well-known/jwks.json',
      grant_types_supported: ['client_credentials', 'authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
    },
  },
  'POST /admin/v1/developers': { summary: 'Onboard a developer (machine credential and public user client)' },
  'POST /admin/v1/users': { summary: 'Create a patient or provider login' },
  'POST /admin/v1/directory/import': { summary: 'Import a directory document (JSON or NDJSON)' },
  'POST /admin/v1/directory/seed': { summary: 'Generate a realistic directory' },
  'POST /admin/v1/appointments/{appointment_id}/transition': { request: { to: 'cancelled', cancellation_reason_type: 'provider_not_available' } },
  'GET /practice/v1/calendar': {
    response: {
      request_id: 'req_3f9a1c',
      data: {
        provider_id: PROVIDER_ID,
        from: '2026-12-07',
        to: '2026-12-07',
        provider_locations: [{
          provider_location_id: PL_ID,
          location_id: LOCATION_ID,
          time_zone: 'America/Chicago',
          active: true,
          days: [{
            date: '2026-12-07',
            appointments: [{
              appointment_id: APPOINTMENT_ID, appointment_status: 'confirmed', confirmation_type: 'manual',
              start_time: '2026-12-07T09:00:00-06:00', end_time: '2026-12-07T09:30:00-06:00',
              start_time_utc: '2026-12-07T15:00:00Z', end_time_utc: '2026-12-07T15:30:00Z', arrived: false,
              visit_reason: { id: VISIT_REASON_ID, name: 'Psychiatric evaluation' }, patient: { first_name: 'Ada', last_name: 'Lovelace' }, booked_by: 'Booking app',
            }],
            open_slots: [{ start_time: START_TIME, start_time_utc: '2026-12-07T15:30:00Z', end_time_utc: '2026-12-07T16:00:00Z', visit_reason_id: VISIT_REASON_ID, patient_types: ['new', 'existing'] }],
          }],
        }],
      },
    },
  },
  'GET /practice/v1/appointments/{appointment_id}': {
    response: {
      request_id: 'req_3f9a1c',
      data: {
        appointment_id: APPOINTMENT_ID, appointment_status: 'confirmed', confirmation_type: 'manual', visit_type: 'in_person',
        provider_id: PROVIDER_ID, provider_location_id: PL_ID, location_id: LOCATION_ID, time_zone: 'America/Chicago',
        start_time: START_TIME, end_time: '2026-12-07T10:00:00-06:00', start_time_utc: '2026-12-07T15:30:00Z', end_time_utc: '2026-12-07T16:00:00Z',
        patient_type: 'new', arrived: false, notes: 'Follow-up on knee pain',
        created_time_utc: '2026-11-22T06:46:40Z', last_modified_time_utc: '2026-11-22T07:02:13Z',
        visit_reason: { id: VISIT_REASON_ID, name: 'Psychiatric evaluation' },
        booked_by: { developer_id: 'dv_5c1e0a', name: 'Booking app' },
        patient: { first_name: 'Ada', last_name: 'Lovelace', date_of_birth: '1990-05-17', sex_at_birth: 'female', phone_number: '2125550123', email_address: 'ada@example.org' },
        history: [{ at: '2026-11-22T06:46:40Z', action: 'create', actor_kind: 'client' }, { at: '2026-11-22T07:02:13Z', action: 'staff:confirmed', actor_kind: 'staff' }],
      },
    },
  },
  'POST /practice/v1/appointments/{appointment_id}/confirm': { response: { request_id: 'req_3f9a1c', data: { appointment_id: APPOINTMENT_ID, appointment_status: 'confirmed' } } },
  'POST /practice/v1/appointments/{appointment_id}/decline': { response: { request_id: 'req_3f9a1c', data: { appointment_id: APPOINTMENT_ID, appointment_status: 'booking_failed' } } },
  'POST /practice/v1/appointments/{appointment_id}/cancel': {
    request: { cancellation_reason_type: 'provider_not_available' },
    response: { request_id: 'req_3f9a1c', data: { appointment_id: APPOINTMENT_ID, appointment_status: 'cancelled' } },
  },
  'POST /practice/v1/appointments/{appointment_id}/move': {
    request: { start_time: '2026-12-09T13:30:00-06:00' },
    response: { request_id: 'req_3f9a1c', data: { appointment_id: APPOINTMENT_ID, appointment_status: 'rescheduled' } },
  },
  'POST /practice/v1/appointments/{appointment_id}/arrived': { response: { request_id: 'req_3f9a1c', data: { appointment_id: APPOINTMENT_ID, appointment_status: 'confirmed' } } },
  'POST /practice/v1/appointments/{appointment_id}/no_show': { response: { request_id: 'req_3f9a1c', data: { appointment_id: APPOINTMENT_ID, appointment_status: 'no_show' } } },
  'GET /practice/v1/events': {
    response: ': stream open\n\nid: 1795330000512000_4c0e7d9a-2f61-4b3e-9a57-1d2c3b4a5f60\nevent: updated\ndata: {"appointment_id":"7b1f2c9e-4d3a-4e8b-9c61-0f5a2d3e4b7c","update_type":"updated","changed_attributes":[{"attribute_path":"appointment.status"}],"occurred_at":"2026-11-22T07:02:13.512Z"}\n\n',
  },
  'GET /auth/authorize': { response: '<!doctype html><html lang="en"><title>Sign in – Carebook</title>…</html>' },
  'POST /v1/appointments': {
    request: {
      appointment_type: 'providers',
      data: { start_time: START_TIME, visit_reason_id: VISIT_REASON_ID, provider_location_id: PL_ID, patient_type: 'new', notes: 'Follow-up on knee pain', patient: PATIENT },
    },
  },
  'POST /v1/appointments/cancel': {
    request: { appointment_id: APPOINTMENT_ID, cancellation_reason_type: 'patient_no_longer_available' },
    response: { request_id: 'req_3f9a1c', data: { appointment_id: APPOINTMENT_ID, appointment_status: 'cancelled', developer_patient_id: 'patient-1042' } },
  },
  'POST /v1/appointments/reschedule': { request: { appointment_id: APPOINTMENT_ID, start_time: '2026-12-09T13:30:00-06:00' } },
  'POST /v1/appointments/confirm': { request: { appointment_id: APPOINTMENT_ID } },
  'PUT /v1/appointments/update-status': { request: { appointment_id: APPOINTMENT_ID, appointment_status: 'arrived' } },
  'POST /v1/token/anonymous-user': {
    request: { app_client_id: '<APP_CLIENT_ID>' },
    response: { request_id: 'req_51d0e2', data: { access_token: 'eyJhbGciOiJFUzI1NiJ9.eyJhbm9ueW1vdXMiOnRydWV9.c2ln', token_type: 'Bearer', expires_in: 3600 } },
  },
  'POST /v1/webhook/mock-request': {
    request: { webhook_url: 'https://hooks.example.org/carebook', webhook_key: 'c2VjcmV0LWtleQ==', appointment_update_type: 'updated' },
    response: {
      event_type: 'appointment_updated',
      webhook_timestamp: '2026-11-22T06:46:40.000Z',
      data: {
        data_type: 'appointment_data',
        appointment_data: {
          appointment_id: APPOINTMENT_ID,
          appointment_updated_timestamp: '2026-11-22T06:46:39.512Z',
          appointment_update_type: 'updated',
          changed_attributes: [
            { attribute_path: 'appointment.start_time' },
            { attribute_path: 'appointment.status' },
            { attribute_path: 'patient.uploaded_attachments', attachment_type: 'community_care_packet' },
          ],
        },
      },
    },
  },
  'GET /v1/provider_locations/availability': {
    response: {
      request_id: 'req_8c2d41',
      data: [
        {
          provider_location_id: PL_ID,
          first_availability: { start_time: '2026-12-07T09:00:00-06:00', visit_reason_id: VISIT_REASON_ID },
          timeslots: [
            { start_time: '2026-12-07T09:00:00-06:00', visit_reason_id: VISIT_REASON_ID },
            { start_time: START_TIME, visit_reason_id: VISIT_REASON_ID },
          ],
        },
      ],
    },
  },
  'PUT /v1/providers/{provider_id}/calendar/timeslots': {
    request: { timeslots: [{ provider_id: PROVIDER_ID, location_id: LOCATION_ID, start_time: '2026-12-07T09:00', time_zone: 'America/Chicago', allowed_visit_reason_ids: [VISIT_REASON_ID], patient_type: 'new' }] },
  },
  'POST /v1/provider_locations/{provider_location_id}/insurance_mappings': { request: { insurance_plan_ids: ['ip_aetna_ppo'], operation: 'Add' } },
  'GET /v1/appointments/{appointment_id}/attachments/{attachment_id}': { response: '<file bytes>' },
  ...practiceExamples({ providerId: PROVIDER_ID, locationId: LOCATION_ID, visitReasonId: VISIT_REASON_ID, appointmentId: APPOINTMENT_ID }),
  ...consoleExamples,
};

/** A plausible value for a string field, from its format and name. */
function sampleString(schema: Record<string, unknown>, name: string): string {
  const format = schema.format as string | undefined;
  if (format === 'date-time') return name.endsWith('_utc') ? '2026-12-01T14:30:00Z' : '2026-12-01T09:30:00-05:00';
  if (format === 'date' || name.includes('date')) return '2026-12-01';
  if (format === 'uri' || format === 'url' || name.endsWith('url')) return 'https://api.example.org/v1/resource?page=1';
  if (format === 'email' || name.includes('email')) return 'ada@example.org';
  if (format === 'uuid' || name === 'appointment_id') return APPOINTMENT_ID;
  if (format === 'binary') return '<file bytes>';
  const byName: [RegExp, string][] = [
    [/provider_location_id$/, PL_ID],
    [/^provider_id$/, PROVIDER_ID],
    [/^location_id$/, LOCATION_ID],
    [/practice_id$/, 'pt_1_1'],
    [/visit_reason_id$/, VISIT_REASON_ID],
    [/insurance_plan_id$/, 'ip_bcbs_ppo'],
    [/carrier_id$/, 'ic_bcbs'],
    [/specialty_id$/, 'sp_psychiatry'],
    [/facility_id$/, 'fa_1_0_0'],
    [/attachment_id$/, 'at_6e0c55'],
    [/timeslot_id$/, 'ts_90bd21'],
    [/schedule_id$/, 'sc_41a0d8'],
    [/client_id$/, '<CLIENT_ID>'],
    [/request_id$/, 'req_3f9a1c'],
    [/^id$/, 'sp_psychiatry'],
    [/npi$/, '2255476725'],
    [/zip_code$/, '53205'],
    [/^state$/, 'NY'],
    [/phone_number$/, '2125550123'],
    [/phone_extension$/, '12'],
    [/time_zone$/, 'America/Chicago'],
    [/start_time$/, START_TIME],
    [/(timestamp|_time|_utc)$/, '2026-11-22T06:46:40Z'],
    [/secret$/, '<CLIENT_SECRET>'],
    [/token$/, 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiIuLi4ifQ.c2ln'],
    [/^title$/, 'MD'],
    [/full_name$/, 'Grace Hopper, MD'],
    [/gender_identity$/, 'Female'],
    [/^language$/, 'English'],
    [/^specialtie$/, 'Family medicine'],
    [/statement$/, 'I take time to listen.'],
    [/first_name$/, 'Ada'],
    [/last_name$/, 'Lovelace'],
    [/city$/, 'New York'],
    [/address1$/, '350 5th Ave'],
    [/name$/, 'Family medicine'],
    [/message$/, 'must be a date-time'],
    [/field$/, 'data.start_time'],
  ];
  const hit = byName.find(([re]) => re.test(name));
  let value = hit ? hit[1] : 'string';
  if (typeof schema.maxLength === 'number') value = value.slice(0, schema.maxLength);
  if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value)) {
    if (/\\d/.test(schema.pattern) && !/[a-z]/i.test(schema.pattern)) value = '2026-12-01';
  }
  return value;
}

/** An example value for a JSON schema (examples, defaults, enums first; then by type and name). */
export function sampleFor(schema: unknown, name = '', depth = 0): Json {
  if (!schema || typeof schema !== 'object' || depth > 12) return null;
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0] as Json;
  if (s.example !== undefined) return s.example as Json;
  if (s.const !== undefined) return s.const as Json;
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0] as Json;
  if (s.default !== undefined) return s.default as Json;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = s[key];
    if (Array.isArray(options)) {
      const first = options.find((o) => (o as Record<string, unknown>)?.type !== 'null') ?? options[0];
      return sampleFor(first, name, depth + 1);
    }
  }
  if (Array.isArray(s.allOf)) return Object.assign({}, ...s.allOf.map((x) => sampleFor(x, name, depth + 1)));
  const type = Array.isArray(s.type) ? (s.type.find((t) => t !== 'null') as string | undefined) : (s.type as string | undefined);
  switch (type ?? (s.properties ? 'object' : undefined)) {
    case 'object': {
      const out: Record<string, Json> = {};
      for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) out[k] = sampleFor(v, k, depth + 1);
      return out;
    }
    case 'array': {
      const item = sampleFor(s.items, name.replace(/s$/, ''), depth + 1);
      return Array.from({ length: Math.max(1, Number(s.minItems ?? 1)) }, () => item);
    }
    case 'string':
      return sampleString(s, name);
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? Math.max(s.minimum, Math.min(1, Number(s.maximum ?? 1))) : /^lat(itude)?$/.test(name) ? 40.7484 : /^lon(gitude)?$/.test(name) ? -73.9857 : 1;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return name ? sampleString(s, name) : {};
  }
}

type Operation = {
  requestBody?: { content?: Record<string, { schema?: unknown; example?: unknown; examples?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown; example?: unknown; examples?: unknown }> }>;
  parameters?: { in: string; required?: boolean; schema?: { default?: unknown } }[];
};

function addExample(content: Record<string, { schema?: unknown; example?: unknown; examples?: unknown }>, given: Json | undefined): void {
  for (const [type, media] of Object.entries(content)) {
    if (media.example !== undefined || media.examples !== undefined) continue;
    media.example = given !== undefined && (type.includes('json') || typeof given === 'string') ? given : sampleFor(media.schema);
    given = undefined; // a hand-written example fits the first media type only
  }
}

/**
 * Completes an OpenAPI document in place and returns it: a query parameter with a default is not
 * required; every request body and success response gets an example (hand-written from `examples`,
 * else generated from its schema). A success response without content gets one from `examples`.
 */
export function withExamples<T extends object>(doc: T, examples: Record<string, OperationExamples> = EXAMPLES): T {
  const paths = (doc as { paths?: Record<string, Record<string, Operation>> }).paths ?? {};
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op || typeof op !== 'object' || !('responses' in op)) continue;
      const given = examples[`${method.toUpperCase()} ${path}`] ?? {};
      if (!(op as { summary?: string }).summary && given.summary) (op as { summary?: string }).summary = given.summary;
      for (const p of op.parameters ?? []) if (p.in === 'query' && p.schema?.default !== undefined) p.required = false;
      if (op.requestBody?.content) addExample(op.requestBody.content, given.request);
      const success = Object.keys(op.responses ?? {}).filter((s) => /^2\d\d$/.test(s)).sort()[0];
      if (!success) continue;
      const res = op.responses![success]!;
      if (!res.content?.['application/json']?.example && !res.content && given.response !== undefined) {
        res.content = { [typeof given.response === 'string' ? 'text/html' : 'application/json']: { schema: { type: typeof given.response === 'string' ? 'string' : 'object' } } };
      }
      if (res.content) addExample(res.content, given.response);
    }
  }
  return doc;
}
