/** Facilities, beta (docs/api/directory.md#facilities-beta `GET /v1-beta/facilities` and `/{facility_id}`). Any valid token, anonymous included. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { facilitiesById, searchFacilities } from '../../../domain/directory/facilities.js';
import { invalidFields, notFound } from '../../../domain/errors.js';
import { errorResponses, nextUrl, pageEnvelope, pagingQuery } from '../common-schemas.js';
import { callerOf, type DirectoryDeps } from './context.js';
import { facilitySearchParameters, MAX_NPIS } from '../../../domain/directory/search-parameters.js';
import { Facility, MaxDistance, ZipCode } from './schemas.js';

export const facilityRoutes: FastifyPluginAsyncTypebox<DirectoryDeps> = async (app, { config, reads: db, keptReference }) => {
  const anyToken = app.guard({ allowAnonymous: true });

  app.get(
    '/v1-beta/facilities',
    {
      onRequest: anyToken,
      config: { alsoCheck: async (req) => (await facilitySearchParameters(db, config.appEnv, req.query as Record<string, unknown>)).errors },
      schema: {
        tags: ['facilities (beta)'],
        summary: 'Find facilities of your directory by NPI or near a ZIP code',
        querystring: Type.Object({
          npis: Type.Optional(Type.String({ maxLength: 11 * MAX_NPIS * 2 })),
          zip_code: Type.Optional(ZipCode),
          building_type: Type.Optional(Type.Union([Type.Literal('clinic'), Type.Literal('hospital')])),
          visit_reason_id: Type.Optional(Type.String({ maxLength: 200 })),
          insurance_plan_id: Type.Optional(Type.String({ maxLength: 200 })),
          max_distance_to_patient_mi: MaxDistance,
          ...pagingQuery({ sizeMax: 100, sizeDefault: 10 }),
        }),
        response: { 200: pageEnvelope(Type.Array(Facility)), ...errorResponses(400) },
      },
    },
    async (req) => {
      const q = req.query;
      const { npis, origin, errors } = await facilitySearchParameters(db, config.appEnv, q);
      if (errors.length) throw invalidFields(errors);
      const r = await searchFacilities(
        db,
        callerOf(req, config),
        {
          npis,
          origin,
          maxDistanceMi: q.max_distance_to_patient_mi,
          buildingType: q.building_type,
          visitReasonId: q.visit_reason_id,
          insurancePlanId: q.insurance_plan_id,
          page: q.page,
          pageSize: q.page_size,
        },
        config.publicBaseUrl,
        keptReference,
      );
      return {
        request_id: String(req.id),
        page: q.page,
        page_size: q.page_size,
        total_count: r.total,
        next_url: nextUrl(config.publicBaseUrl, req, q.page, q.page_size, r.total),
        data: r.items,
      };
    },
  );

  app.get(
    '/v1-beta/facilities/:facility_id',
    {
      onRequest: anyToken,
      schema: {
        tags: ['facilities (beta)'],
        summary: 'Read one facility of your directory',
        params: Type.Object({ facility_id: Type.String({ maxLength: 200 }) }),
        response: { 200: Type.Object({ request_id: Type.String(), data: Facility }), ...errorResponses(400, 404) },
      },
    },
    async (req) => {
      const [f] = await facilitiesById(db, callerOf(req, config), [req.params.facility_id], config.publicBaseUrl, keptReference);
      if (!f) throw notFound(`no facility ${req.params.facility_id} in your directory`, 'facility_id');
      return { request_id: String(req.id), data: f };
    },
  );
};
