/**
 * `GET /v1/provider_locations/availability` (docs/api/README.md#operations, docs/api/availability.md#availability-request): bookable start
 * times per provider-location for a visit reason and patient type, in the provider's own offset.
 * Any valid token, anonymous included (docs/api/auth.md#scopes).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../../config.js';
import type { Db } from '../../../db/database.js';
import { availabilityWindows, walkAvailability } from '../../../domain/availability/slot-lists.js';
import type { Timeslot } from '../../../domain/availability/slots.js';
import { availabilitySpan, keptFirstAvailability, keptInsurance } from '../../../domain/availability/kept-availability.js';
import { loadKeptSchedules } from '../../../domain/availability/kept-load.js';
import type { KeptSchedules } from '../../../domain/availability/kept-schedules.js';
import { LocalClock } from '../../../domain/scheduling/local-time.js';
import { availabilityQueryErrors, idList, spanError } from '../../../domain/availability/query-checks.js';
import { principalOf } from '../../../http/auth-guard.js';
import { invalidFields, notFound } from '../../../domain/errors.js';
import { errorResponses } from '../common-schemas.js';

export interface AvailabilityRouteDeps {
  config: Config;
  /**
   * The handle the availability reads use: the read replica in production when there is one, else
   * the primary (docs/decisions/0020-read-replicas.md). The route writes nothing.
   */
  reads: Db;
  /**
   * The application's kept schedule data (docs/scheduling.md, "Kept schedule data"), read and
   * checked on `reads` only: its versions and held time come from the same handle as its data.
   */
  kept: KeptSchedules;
}


const Timeslot = Type.Object({
  start_time: Type.String({ description: 'ISO-8601 with the provider\'s own UTC offset' }),
  visit_reason_id: Type.String(),
});

const AvailabilityQuery = Type.Object({
  provider_location_ids: Type.String({ minLength: 1, description: 'Comma list, at most 50' }),
  visit_reason_id: Type.String({ minLength: 1 }),
  patient_type: Type.Unsafe<'new' | 'existing'>(Type.String({ enum: ['new', 'existing'] })),
  start_date_in_provider_local_time: Type.Optional(Type.String({ format: 'date', description: 'YYYY-MM-DD; default today in the provider\'s zone', 'x-error-message': 'must be a date YYYY-MM-DD' })),
  end_date_in_provider_local_time: Type.Optional(
    Type.String({ format: 'date', description: 'YYYY-MM-DD inclusive; default start + 7 days; at most start + 31 days', 'x-error-message': 'must be a date YYYY-MM-DD' }),
  ),
  insurance_plan_id: Type.Optional(Type.String()),
  insurance_carrier_id: Type.Optional(Type.String()),
});

const AvailabilityResponse = Type.Object({
  request_id: Type.String(),
  data: Type.Array(
    Type.Object({ provider_location_id: Type.String(), first_availability: Type.Optional(Timeslot), timeslots: Type.Array(Timeslot) }),
  ),
});

const slotOut = (s: Timeslot) => ({ start_time: s.startTime, visit_reason_id: s.visitReasonId });

export const availabilityRoutes: FastifyPluginAsyncTypebox<AvailabilityRouteDeps> = async (app, { config, reads: db, kept }) => {
  // One memo of local-time conversions per application (bounded), shared by its requests.
  const sharedClock = new LocalClock();
  app.get(
    '/v1/provider_locations/availability',
    {
      onRequest: app.guard({ allowAnonymous: true }),
      config: {
        alsoCheck: async (req) => {
          const q = req.query as Record<string, unknown>;
          const errors = availabilityQueryErrors(q, new LocalClock());
          if (typeof q.visit_reason_id === 'string' && q.visit_reason_id) {
            const vr = await db.selectFrom('visit_reasons').select('id').where('env', '=', config.appEnv).where('id', '=', q.visit_reason_id).executeTakeFirst();
            if (!vr) errors.push({ field: 'visit_reason_id', message: `unknown visit reason ${q.visit_reason_id}` });
          }
          return errors;
        },
      },
      schema: {
        tags: ['availability'],
        summary: 'Bookable start times per provider location for a visit reason and patient type',
        querystring: AvailabilityQuery,
        response: { 200: AvailabilityResponse, ...errorResponses(400, 404) },
      },
    },
    async (req) => {
      const q = req.query;
      const p = principalOf(req);
      const env = config.appEnv;
      const ids = idList(q.provider_location_ids);
      const clock = new LocalClock();
      const start = q.start_date_in_provider_local_time;
      const end = q.end_date_in_provider_local_time;
      const now = new Date();
      // Every error at once; provider-locations are loaded only for a list of a valid size.
      const errors = availabilityQueryErrors(q, clock);
      const unique = [...new Set(ids)];
      const idsOk = !errors.some((e) => e.field === 'provider_location_ids');
      // One statement when everything is kept (docs/scheduling.md, "Kept schedule data"): the
      // provider-locations, the visit reason and their schedules over the window, and held time.
      const loaded = idsOk && !errors.length
        ? await loadKeptSchedules(db, kept, { env, developerId: p.developerId, ids: unique, visitReasonId: q.visit_reason_id, span: availabilitySpan(sharedClock, now, start, end), withHolds: true })
        : undefined;
      const reasonKnown = loaded
        ? loaded.reasonKnown
        : !!(await db.selectFrom('visit_reasons').select('id').where('env', '=', env).where('id', '=', q.visit_reason_id).executeTakeFirst());
      if (!reasonKnown) errors.push({ field: 'visit_reason_id', message: `unknown visit reason ${q.visit_reason_id}` });
      if (errors.length || !loaded) throw invalidFields(errors);
      const missing = unique.filter((id) => !loaded.pls.get(id)?.active);
      if (missing.length) throw notFound(`provider locations not in your directory: ${missing.join(', ')}`, 'provider_location_ids');
      // Without a start date the window starts today in each provider's own zone: an end date is
      // checked against it per provider-location (without one the window is the default week).
      const checkSpan = (from: string): void => {
        const e = spanError(clock, from, end);
        if (e) throw invalidFields([e]);
      };
      if (start === undefined && end !== undefined) for (const id of unique) checkSpan(sharedClock.today(loaded.pls.get(id)!.timeZone, now));

      let eligible = unique;
      if (q.insurance_plan_id || q.insurance_carrier_id) {
        const ok = await keptInsurance(db, kept, {
          env,
          directory: loaded.directory,
          ids: unique,
          filter: { ...(q.insurance_plan_id ? { planId: q.insurance_plan_id } : {}), ...(q.insurance_carrier_id ? { carrierId: q.insurance_carrier_id } : {}) },
        });
        eligible = unique.filter((id) => ok.has(id));
      }
      const pls = new Map(eligible.map((id) => [id, loaded.pls.get(id)!]));
      const walk = { visitReasonId: q.visit_reason_id, patientType: q.patient_type, now, clock: sharedClock, ...(start ? { from: start } : {}), ...(end ? { to: end } : {}) };
      const result = walkAvailability(pls, loaded.data, availabilityWindows(pls, walk).windows, walk);
      // first_availability: the window's first slot, else the next one within 90 days after the window.
      const empty = eligible.filter((id) => !result.get(id)?.slots.length);
      const later = empty.length
        ? (
            await keptFirstAvailability(db, kept, {
              env,
              developerId: p.developerId,
              pls: new Map(empty.map((id) => [id, pls.get(id)!])),
              visitReasonId: q.visit_reason_id,
              patientType: q.patient_type,
              now,
              clock: sharedClock,
              ...(result.get(empty[0]!) ? { from: sharedClock.addDays(result.get(empty[0]!)!.to, 1) } : {}),
            })
          ).found
        : new Map<string, Timeslot>();
      return {
        request_id: String(req.id),
        data: ids.map((id) => {
          const slots = result.get(id)?.slots ?? [];
          const first = slots[0] ?? later.get(id);
          return { provider_location_id: id, ...(first ? { first_availability: slotOut(first) } : {}), timeslots: slots.map(slotOut) };
        }),
      };
    },
  );
};
