/** Facilities, beta (contracts.md §4 `GET /v1-beta/facilities` and `/{facility_id}`). Any valid token, anonymous included. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { facilitiesById, searchFacilities } from '../../../domain/directory/facilities.js';
import { zipCentroid } from '../../../domain/directory/geo.js';
import { getVisitReason } from '../../../domain/directory/reference-data.js';
import { badRequest, notFound } from '../../../http/errors.js';
import { errorResponses, nextUrl, pageEnvelope, pagingQuery } from '../common-schemas.js';
import { callerOf, type DirectoryDeps } from './context.js';
import { checkPlan, MAX_NPIS, parseNpis } from './providers.js';
import { Facility, MaxDistance, ZipCode } from './schemas.js';

export const facilityRoutes: FastifyPluginAsyncTypebox<DirectoryDeps> = async (app, { config, db }) => {
  const anyToken = app.guard({ allowAnonymous: true });

  app.get(
    '/v1-beta/facilities',
    {
      onRequest: anyToken,
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
      const npis = parseNpis(q.npis, false);
      if (!npis && !q.zip_code) throw badRequest('zip_code', 'npis or zip_code is required');
      const origin = q.zip_code ? zipCentroid(q.zip_code) : undefined;
      if (q.zip_code && !origin) throw badRequest('zip_code', `unknown ZIP code ${q.zip_code}`);
      if (q.visit_reason_id && !(await getVisitReason(db, config.appEnv, q.visit_reason_id))) {
        throw badRequest('visit_reason_id', `unknown visit reason ${q.visit_reason_id}`);
      }
      await checkPlan(db, config.appEnv, q.insurance_plan_id);
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
      const [f] = await facilitiesById(db, callerOf(req, config), [req.params.facility_id], config.publicBaseUrl);
      if (!f) throw notFound(`no facility ${req.params.facility_id} in your directory`, 'facility_id');
      return { request_id: String(req.id), data: f };
    },
  );
};
