/**
 * Provider calendar timeslots (docs/api/README.md#operations, docs/api/calendar.md#access, docs/api/calendar.md):
 * `GET`/`PUT /v1/providers/{provider_id}/calendar/timeslots?date=YYYY-MM-DD`.
 */
import { installJsonBodyParser } from '../../../http/json-body.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../../config.js';
import type { Db } from '../../../db/database.js';
import { calendarLocations, calendarPushErrors, MAX_SLOTS_PER_PUT, readCalendar, replaceCalendar } from '../../../domain/scheduling/calendar.js';
import { isLocalDate } from '../../../domain/scheduling/local-time.js';
import { sharedWithOtherDevelopers } from '../../../domain/sandbox/shared-writes.js';
import { principalOf } from '../../../http/auth-guard.js';
import { sharedInSandbox } from '../../../domain/errors.js';
import { invalidFields, invalidInput } from '../../../domain/errors.js';
import { errorResponses } from '../common-schemas.js';

export interface CalendarRouteDeps {
  config: Config;
  db: Db;
}

const PatientType = Type.Unsafe<'new' | 'existing'>(Type.String({ enum: ['new', 'existing'] }));
const Params = Type.Object({ provider_id: Type.String({ minLength: 1, maxLength: 200 }) });
const DateQuery = { date: Type.String({ format: 'date', description: 'Local date YYYY-MM-DD', 'x-error-message': 'must be a date YYYY-MM-DD' }) };

const SlotOut = Type.Object({
  timeslot_id: Type.String(),
  created_utc: Type.String(),
  provider_id: Type.String(),
  location_id: Type.String(),
  start_time: Type.String({ description: 'Local date-time without offset' }),
  time_zone: Type.String(),
  allowed_visit_reason_ids: Type.Array(Type.String()),
  excluded_visit_reason_ids: Type.Array(Type.String()),
  patient_type: Type.Optional(PatientType),
});

const SlotIn = Type.Object({
  provider_id: Type.String(),
  location_id: Type.String(),
  start_time: Type.String({ description: 'ISO-8601 local date-time, optional seconds; date part must match `date`' }),
  time_zone: Type.String({ description: 'IANA zone id' }),
  allowed_visit_reason_ids: Type.Optional(Type.Array(Type.String())),
  excluded_visit_reason_ids: Type.Optional(Type.Array(Type.String(), { description: 'Beats allowed_visit_reason_ids' })),
  patient_type: Type.Optional(PatientType),
});

function checkDate(date: string): void {
  if (!isLocalDate(date)) throw invalidInput('date', 'must be a date YYYY-MM-DD');
}

export const calendarRoutes: FastifyPluginAsyncTypebox<CalendarRouteDeps> = async (app, { config, db }) => {
  // "An empty body erases all slots for that date": an empty JSON body is {} here.
  installJsonBodyParser(app, { emptyBody: {} });
  const path = '/v1/providers/:provider_id/calendar/timeslots';

  app.get(
    path,
    {
      onRequest: app.guard({ scope: 'external.calendar.read', allowProviderUser: true }),
      schema: {
        tags: ['calendar'],
        summary: 'Read a provider\'s calendar timeslots for a local date',
        params: Params,
        querystring: Type.Object({
          ...DateQuery,
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 500 }),
          next_page_token: Type.Optional(Type.String()),
        }),
        response: {
          200: Type.Object({
            request_id: Type.String(),
            limit: Type.Integer(),
            next_page_token: Type.Union([Type.String(), Type.Null()]),
            next_url: Type.Union([Type.String(), Type.Null()]),
            data: Type.Array(SlotOut),
          }),
          ...errorResponses(400, 404),
        },
      },
    },
    async (req) => {
      const { provider_id } = req.params;
      const { date, limit, next_page_token } = req.query;
      checkDate(date);
      const locations = await calendarLocations(db, principalOf(req), provider_id);
      const page = await readCalendar(db, config.appEnv, {
        providerId: provider_id,
        date,
        limit,
        locationIds: locations,
        ...(next_page_token ? { nextPageToken: next_page_token } : {}),
      });
      let next: string | null = null;
      if (page.nextPageToken) {
        const u = new URL(`${config.publicBaseUrl}/v1/providers/${encodeURIComponent(provider_id)}/calendar/timeslots`);
        u.searchParams.set('date', date);
        u.searchParams.set('limit', String(limit));
        u.searchParams.set('next_page_token', page.nextPageToken);
        next = u.toString();
      }
      return { request_id: String(req.id), limit, next_page_token: page.nextPageToken, next_url: next, data: page.slots };
    },
  );

  app.put(
    path,
    {
      onRequest: app.guard({ scope: 'external.calendar.write', allowProviderUser: true }),
      config: {
        alsoCheck: (req) => {
          const { params, query, body } = req as { params: { provider_id?: unknown }; query: { date?: unknown }; body: { timeslots?: unknown } | null };
          return calendarPushErrors({ providerId: String(params.provider_id ?? ''), date: query?.date, slots: body?.timeslots });
        },
      },
      // No body at all erases the date too (docs/api/README.md#operations).
      preValidation: async (req) => {
        if (req.body === undefined || req.body === null) req.body = {};
      },
      schema: {
        tags: ['calendar'],
        summary: 'Replace all of a provider\'s timeslots on a local date (empty array or body erases them)',
        params: Params,
        querystring: Type.Object(DateQuery),
        body: Type.Object({ timeslots: Type.Optional(Type.Array(SlotIn, { maxItems: MAX_SLOTS_PER_PUT })) }),
        response: {
          200: Type.Object({ request_id: Type.String(), errors: Type.Object({ not_found_location_ids: Type.Array(Type.String()) }) }),
          ...errorResponses(400, 403, 404),
        },
      },
    },
    async (req) => {
      const { provider_id } = req.params;
      const problems = calendarPushErrors({ providerId: provider_id, date: req.query.date, slots: req.body.timeslots });
      if (problems.length) throw invalidFields(problems);
      const principal = principalOf(req);
      const locations = await calendarLocations(db, principal, provider_id);
      if (config.appEnv === 'sandbox' && principal.kind === 'client') {
        // A sandbox provider shared with other developers' directories: a push would change their
        // calendars too (docs/decisions/0007-sandbox-writes-isolated.md).
        const shared = await sharedWithOtherDevelopers(db, principal, { providerId: provider_id });
        if (shared.length) throw sharedInSandbox('provider_id', `sandbox provider ${provider_id} is shared with other developers (${shared.slice(0, 5).join(', ')}); calendar writes to it are refused so they cannot affect them: push calendars to a provider only your directory holds`);
      }
      const r = await replaceCalendar(db, config.appEnv, {
        providerId: provider_id,
        date: req.query.date,
        slots: req.body.timeslots ?? [],
        locationIds: locations,
      });
      return { request_id: String(req.id), errors: { not_found_location_ids: r.notFoundLocationIds } };
    },
  );
};
