/** Insurance plans (docs/api/directory.md#insurance-plans; docs/api/conventions.md#additional-fields). Any valid token, anonymous included. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { getInsurancePlan, listInsurancePlans } from '../../../domain/directory/insurance-plans.js';
import { invalidInput, notFound } from '../../../domain/errors.js';
import { errorResponses, nextUrl, pageEnvelope, pagingQuery } from '../common-schemas.js';
import type { DirectoryDeps } from './context.js';
import { CareCategory, InsurancePlan, PlanStatus, PlanType, ProgramType } from './schemas.js';

export const insurancePlanRoutes: FastifyPluginAsyncTypebox<DirectoryDeps> = async (app, { config, reads: db, keptReference }) => {
  const anyToken = app.guard({ allowAnonymous: true });

  app.get(
    '/v1/insurance_plans',
    {
      onRequest: anyToken,
      schema: {
        tags: ['reference'],
        summary: 'List insurance plans',
        querystring: Type.Object({
          ...pagingQuery({ sizeMax: 1000, sizeDefault: 100 }),
          status: Type.Optional(PlanStatus),
          state: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
          plan_type: Type.Optional(PlanType),
          network_type: Type.Optional(PlanType),
          program_type: Type.Optional(ProgramType),
          care_category: Type.Optional(CareCategory),
        }),
        response: { 200: pageEnvelope(Type.Array(InsurancePlan)), ...errorResponses(400) },
      },
    },
    async (req) => {
      const q = req.query;
      if (q.plan_type && q.network_type && q.plan_type !== q.network_type) {
        throw invalidInput('network_type', 'must equal plan_type when both are given (network_type is the newer name of plan_type)');
      }
      const r = await listInsurancePlans(db, config.appEnv, {
        page: q.page,
        pageSize: q.page_size,
        status: q.status ?? 'active',
        state: q.state,
        planType: q.plan_type ?? q.network_type,
        programType: q.program_type,
        careCategory: q.care_category,
      }, keptReference);
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
    '/v1/insurance_plans/:insurance_plan_id',
    {
      onRequest: anyToken,
      schema: {
        tags: ['reference'],
        summary: 'Read one insurance plan',
        params: Type.Object({ insurance_plan_id: Type.String({ pattern: '^ip_.+', maxLength: 200 }) }),
        response: { 200: Type.Object({ request_id: Type.String(), data: InsurancePlan }), ...errorResponses(400, 404) },
      },
    },
    async (req) => {
      const plan = await getInsurancePlan(db, config.appEnv, req.params.insurance_plan_id);
      if (!plan) throw notFound(`no insurance plan ${req.params.insurance_plan_id}`, 'insurance_plan_id');
      return { request_id: String(req.id), data: plan };
    },
  );
};
