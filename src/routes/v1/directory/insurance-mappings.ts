/**
 * A provider-location's insurance mappings (docs/api/directory.md#reference-data, docs/api/directory.md#insurance-mappings): GET with any
 * valid token (anonymous included), POST with `external.provider_insurance.write` → 202, applied by
 * the background job; 409 when the practice manages the plans.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { getInsuranceMappings, requestInsuranceMappingChange } from '../../../domain/directory/insurance-mappings.js';
import { isProviderLocationId } from '../../../domain/directory/visible.js';
import { invalidInput, conflict, notFound, sharedInSandbox } from '../../../domain/errors.js';
import { errorResponses } from '../common-schemas.js';
import { callerOf, type DirectoryDeps } from './context.js';
import { InsuranceMappings } from './schemas.js';

export const insuranceMappingRoutes: FastifyPluginAsyncTypebox<DirectoryDeps & { kickJob: () => void }> = async (app, { config, db, reads, kickJob }) => {
  const Params = Type.Object({ provider_location_id: Type.String({ maxLength: 500 }) });
  const checkId = (id: string): void => {
    if (!isProviderLocationId(id)) throw invalidInput('provider_location_id', 'must be a provider-location id: pr_<id>|lo_<id>');
  };

  app.get(
    '/v1/provider_locations/:provider_location_id/insurance_mappings',
    {
      onRequest: app.guard({ allowAnonymous: true }),
      schema: {
        tags: ['directory'],
        summary: "Read a provider-location's insurance plan mappings and the plans it could accept",
        params: Params,
        response: { 200: Type.Object({ request_id: Type.String(), data: InsuranceMappings }), ...errorResponses(400, 403, 404, 409) },
      },
    },
    async (req) => {
      checkId(req.params.provider_location_id);
      const m = await getInsuranceMappings(reads, callerOf(req, config), req.params.provider_location_id);
      if (!m) throw notFound(`no provider-location ${req.params.provider_location_id} in your directory`, 'provider_location_id');
      return { request_id: String(req.id), data: m };
    },
  );

  app.post(
    '/v1/provider_locations/:provider_location_id/insurance_mappings',
    {
      onRequest: app.guard({ scope: 'external.provider_insurance.write' }),
      schema: {
        tags: ['directory'],
        summary: "Request a change to a provider-location's insurance plans (applied asynchronously)",
        params: Params,
        body: Type.Object({
          insurance_plan_ids: Type.Array(Type.String({ maxLength: 200 }), { maxItems: 1000 }),
          operation: Type.Union([Type.Literal('Add'), Type.Literal('Remove'), Type.Literal('Replace')]),
        }),
        response: { 202: Type.Object({ request_id: Type.String() }), ...errorResponses(400, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      checkId(req.params.provider_location_id);
      if (req.body.operation !== 'Replace' && req.body.insurance_plan_ids.length === 0) {
        throw invalidInput('insurance_plan_ids', `must name at least one plan for ${req.body.operation}`);
      }
      const r = await requestInsuranceMappingChange(db, callerOf(req, config), {
        providerLocationId: req.params.provider_location_id,
        operation: req.body.operation,
        insurancePlanIds: req.body.insurance_plan_ids,
      });
      switch (r.kind) {
        case 'not_found':
          throw notFound(`no provider-location ${req.params.provider_location_id} in your directory`, 'provider_location_id');
        case 'practice_managed':
          throw conflict("this provider-location's insurance plans are managed at practice level", 'provider_location_id');
        case 'shared_in_sandbox':
          throw sharedInSandbox('provider_location_id', `sandbox provider-location ${req.params.provider_location_id} is shared with other developers; insurance-mapping changes to it are refused so they cannot affect them`);
        case 'unknown_plans':
          throw invalidInput('insurance_plan_ids', `unknown insurance plan(s): ${r.ids.slice(0, 10).join(', ')}`);
        case 'accepted':
          kickJob();
          return reply.code(202).send({ request_id: String(req.id) });
      }
    },
  );
};
