/**
 * Providers and provider-locations (docs/api/directory.md#providers-by-npi, docs/api/README.md#operations; docs/api/directory.md#provider-location-search): search by NPI,
 * search by ZIP and distance, and read one provider-location. Any valid token, anonymous included.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { loadProviderLocationViews } from '../../../domain/directory/provider-location-view.js';
import { searchProviderLocations } from '../../../domain/directory/provider-location-search.js';
import { searchProvidersByNpi } from '../../../domain/directory/provider-search.js';
import { MAX_NPIS, npiList, npiSearchErrors, planErrors, providerSearchParameters } from '../../../domain/directory/search-parameters.js';
import { isProviderLocationId } from '../../../domain/directory/visible.js';
import { LocalClock } from '../../../domain/scheduling/local-time.js';
import { invalidFields, notFound, type FieldError } from '../../../domain/errors.js';
import { errorResponses, nextUrl, pageEnvelope, pagingQuery } from '../common-schemas.js';
import { callerOf, type DirectoryDeps } from './context.js';
import { MaxDistance, ProviderLocation, ProviderSearchProvider, ZipCode } from './schemas.js';

export const providerRoutes: FastifyPluginAsyncTypebox<DirectoryDeps> = async (app, { config, reads: db, availabilityCache, keptReference }) => {
  // The single read computes from current data (no memoised summary) but shares the application's
  // local-time conversions: a new clock per request would start with an empty memo.
  const clock = availabilityCache?.clock ?? new LocalClock();
  const anyToken = app.guard({ allowAnonymous: true });
  const PlanId = Type.String({ maxLength: 200 });

  app.get(
    '/v1/providers',
    {
      onRequest: anyToken,
      config: { alsoCheck: (req) => npiSearchErrors(db, config.appEnv, req.query as Record<string, unknown>) },
      schema: {
        tags: ['directory'],
        summary: 'Find providers of your directory by NPI',
        querystring: Type.Object({
          npis: Type.String({ maxLength: 11 * MAX_NPIS * 2, description: `Comma-delimited NPIs, at most ${MAX_NPIS}` }),
          insurance_plan_id: Type.Optional(PlanId),
        }),
        response: {
          200: Type.Object({
            request_id: Type.String(),
            data: Type.Array(Type.Object({ npi: Type.String(), providers: Type.Array(ProviderSearchProvider) })),
          }),
          ...errorResponses(400),
        },
      },
    },
    async (req) => {
      const { npis, errors } = npiList(req.query.npis, true);
      errors.push(...(await planErrors(db, config.appEnv, req.query.insurance_plan_id)));
      if (errors.length || !npis) throw invalidFields(errors);
      const data = await searchProvidersByNpi(db, callerOf(req, config), {
        npis,
        insurancePlanId: req.query.insurance_plan_id,
        publicBaseUrl: config.publicBaseUrl,
        // A listing, like the search: its first availability dates may be up to a minute old (src/domain/availability/summary-cache.ts).
        cache: availabilityCache,
        keep: keptReference,
      });
      return { request_id: String(req.id), data };
    },
  );

  app.get(
    '/v1/provider_locations',
    {
      onRequest: anyToken,
      config: { alsoCheck: async (req) => (await providerSearchParameters(db, config.appEnv, req.query as Record<string, unknown>)).errors },
      schema: {
        tags: ['directory'],
        summary: 'Search provider-locations near a ZIP code, nearest first',
        querystring: Type.Object({
          zip_code: ZipCode,
          specialty_id: Type.Optional(Type.String({ maxLength: 200 })),
          visit_reason_id: Type.Optional(Type.String({ maxLength: 200 })),
          insurance_plan_id: Type.Optional(PlanId),
          visit_type: Type.Union([Type.Literal('all'), Type.Literal('in_person'), Type.Literal('video_visit')], { default: 'in_person' }),
          max_distance_to_patient_mi: MaxDistance,
          ...pagingQuery({ sizeMax: 100, sizeDefault: 10 }),
        }),
        response: {
          200: pageEnvelope(
            Type.Object({
              search_parameters: Type.Object({ specialty_id: Type.Union([Type.String(), Type.Null()]), visit_reason_id: Type.Union([Type.String(), Type.Null()]) }),
              provider_locations: Type.Array(ProviderLocation),
            }),
          ),
          ...errorResponses(400),
        },
      },
    },
    async (req) => {
      const q = req.query;
      const { origin, specialtyId, visitReasonId, errors } = await providerSearchParameters(db, config.appEnv, q);
      if (errors.length || !origin) throw invalidFields(errors);
      const caller = callerOf(req, config);
      const found = await searchProviderLocations(db, caller, {
        origin,
        // Filter by what the caller named: a specialty, or a visit reason (which implies its specialty).
        specialtyId: q.specialty_id,
        visitReasonId: q.visit_reason_id,
        insurancePlanId: q.insurance_plan_id,
        visitType: q.visit_type,
        maxDistanceMi: q.max_distance_to_patient_mi,
        page: q.page,
        pageSize: q.page_size,
      });
      const distances = new Map(found.hits.filter((h) => h.distance !== null).map((h) => [h.id, h.distance!]));
      const views = await loadProviderLocationViews(db, caller, {
        ids: found.hits.map((h) => h.id),
        insurancePlanId: q.insurance_plan_id,
        distances,
        publicBaseUrl: config.publicBaseUrl,
        // Search results may show an availability summary up to a minute old (src/domain/availability/summary-cache.ts).
        cache: availabilityCache,
        keep: keptReference,
      });
      return {
        request_id: String(req.id),
        page: q.page,
        page_size: q.page_size,
        total_count: found.total,
        next_url: nextUrl(config.publicBaseUrl, req, q.page, q.page_size, found.total),
        data: {
          search_parameters: { specialty_id: specialtyId ?? null, visit_reason_id: visitReasonId ?? null },
          provider_locations: found.hits.map((h) => views.get(h.id)).filter((v) => v !== undefined),
        },
      };
    },
  );

  app.get(
    '/v1/provider_locations/:provider_location_id',
    {
      onRequest: anyToken,
      schema: {
        tags: ['directory'],
        summary: 'Read one provider-location of your directory',
        params: Type.Object({ provider_location_id: Type.String({ maxLength: 500 }) }),
        querystring: Type.Object({ insurance_plan_id: Type.Optional(PlanId) }),
        response: { 200: Type.Object({ request_id: Type.String(), data: ProviderLocation }), ...errorResponses(400, 404) },
      },
    },
    async (req) => {
      const id = req.params.provider_location_id;
      const errors: FieldError[] = isProviderLocationId(id) ? [] : [{ field: 'provider_location_id', message: 'must be a provider-location id: pr_<id>|lo_<id>' }];
      errors.push(...(await planErrors(db, config.appEnv, req.query.insurance_plan_id)));
      if (errors.length) throw invalidFields(errors);
      const views = await loadProviderLocationViews(db, callerOf(req, config), {
        ids: [id],
        insurancePlanId: req.query.insurance_plan_id,
        publicBaseUrl: config.publicBaseUrl,
        clock,
        keep: keptReference,
      });
      const v = views.get(id);
      if (!v) throw notFound(`no provider-location ${id} in your directory`, 'provider_location_id');
      return { request_id: String(req.id), data: v };
    },
  );
};
