/**
 * Providers and provider-locations (interface.md §2.5, §4.9, §4.16; contracts.md §4): search by NPI,
 * search by ZIP and distance, and read one provider-location. Any valid token, anonymous included.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../../../db/database.js';
import type { Env } from '../../../db/schema.js';
import { zipCentroid } from '../../../domain/directory/geo.js';
import { existingPlanIds } from '../../../domain/directory/insurance-plans.js';
import { loadProviderLocationViews } from '../../../domain/directory/provider-location-view.js';
import { searchProviderLocations } from '../../../domain/directory/provider-location-search.js';
import { searchProvidersByNpi } from '../../../domain/directory/provider-search.js';
import { getSpecialty, getVisitReason } from '../../../domain/directory/reference-data.js';
import { isProviderLocationId } from '../../../domain/directory/visible.js';
import { badRequest, notFound } from '../../../http/errors.js';
import { commaList, errorResponses, nextUrl, pageEnvelope, pagingQuery } from '../common-schemas.js';
import { callerOf, type DirectoryDeps } from './context.js';
import { MaxDistance, ProviderLocation, ProviderSearchProvider, ZipCode } from './schemas.js';

export const MAX_NPIS = 50;

/** `npis`: a comma list of at most 50 ten-digit NPIs (interface.md §4.9, §8). */
export function parseNpis(raw: string | undefined, required: boolean): string[] | undefined {
  const npis = commaList(raw);
  if (npis.length === 0) {
    if (required) throw badRequest('npis', 'is required: a comma-delimited list of NPIs');
    return undefined;
  }
  if (npis.length > MAX_NPIS) throw badRequest('npis', `must list at most ${MAX_NPIS} NPIs, got ${npis.length}`);
  const bad = npis.filter((n) => !/^\d{10}$/.test(n));
  if (bad.length) throw badRequest('npis', `must be 10-digit NPIs: ${bad.slice(0, 5).join(', ')}`);
  return npis;
}

/** 400 naming `insurance_plan_id` when the plan does not exist in the environment. */
export async function checkPlan(db: Db, env: Env, id: string | undefined): Promise<void> {
  if (id === undefined) return;
  if (!(await existingPlanIds(db, env, [id])).has(id)) throw badRequest('insurance_plan_id', `unknown insurance plan ${id}`);
}

export const providerRoutes: FastifyPluginAsyncTypebox<DirectoryDeps> = async (app, { config, db, availabilityCache }) => {
  const anyToken = app.guard({ allowAnonymous: true });
  const PlanId = Type.String({ maxLength: 200 });

  app.get(
    '/v1/providers',
    {
      onRequest: anyToken,
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
      const npis = parseNpis(req.query.npis, true)!;
      await checkPlan(db, config.appEnv, req.query.insurance_plan_id);
      const data = await searchProvidersByNpi(db, callerOf(req, config), {
        npis,
        insurancePlanId: req.query.insurance_plan_id,
        publicBaseUrl: config.publicBaseUrl,
        // A listing, like the search: its first availability dates may be up to a minute old (availability-cache.ts).
        cache: availabilityCache,
      });
      return { request_id: String(req.id), data };
    },
  );

  app.get(
    '/v1/provider_locations',
    {
      onRequest: anyToken,
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
      const origin = zipCentroid(q.zip_code);
      if (!origin) throw badRequest('zip_code', `unknown ZIP code ${q.zip_code}`);
      if (!q.specialty_id && !q.visit_reason_id) throw badRequest('specialty_id', 'specialty_id or visit_reason_id is required');
      let specialtyId = q.specialty_id;
      let visitReasonId = q.visit_reason_id;
      if (q.visit_reason_id) {
        const vr = await getVisitReason(db, config.appEnv, q.visit_reason_id);
        if (!vr) throw badRequest('visit_reason_id', `unknown visit reason ${q.visit_reason_id}`);
        if (q.specialty_id && vr.specialty_id !== q.specialty_id) {
          throw badRequest('visit_reason_id', `visit reason ${vr.id} belongs to specialty ${vr.specialty_id}, not ${q.specialty_id}`);
        }
        specialtyId = vr.specialty_id;
      }
      if (q.specialty_id) {
        const sp = await getSpecialty(db, config.appEnv, q.specialty_id);
        if (!sp) throw badRequest('specialty_id', `unknown specialty ${q.specialty_id}`);
        visitReasonId ??= sp.default_visit_reason_id;
      }
      await checkPlan(db, config.appEnv, q.insurance_plan_id);
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
        // Search results may show an availability summary up to a minute old (availability-cache.ts).
        cache: availabilityCache,
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
      if (!isProviderLocationId(id)) throw badRequest('provider_location_id', 'must be a provider-location id: pr_<id>|lo_<id>');
      await checkPlan(db, config.appEnv, req.query.insurance_plan_id);
      const views = await loadProviderLocationViews(db, callerOf(req, config), {
        ids: [id],
        insurancePlanId: req.query.insurance_plan_id,
        publicBaseUrl: config.publicBaseUrl,
      });
      const v = views.get(id);
      if (!v) throw notFound(`no provider-location ${id} in your directory`, 'provider_location_id');
      return { request_id: String(req.id), data: v };
    },
  );
};
