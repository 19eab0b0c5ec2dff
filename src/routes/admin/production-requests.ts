/**
 * The operator's side of production access (docs/api/admin.md#production-requests): list the
 * console accounts' requests, grant one (the production developer, owned by the same account,
 * written into the production deployment's database when `PRODUCTION_DATABASE_URL` names it) or
 * refuse one with a reason.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { withProductionTarget } from '../../db/production-target.js';
import { grantProduction } from '../../domain/console/production-grant.js';
import { listProductionRequests, refuseProduction } from '../../domain/console/production.js';
import { ErrorBody } from '../v1/common-schemas.js';
import { ProductionRequest } from '../console/schemas.js';

export const adminProductionRoutes: FastifyPluginAsyncTypebox<{ config: Config; db: Db }> = async (app, { config, db }) => {
  app.get('/production-requests', {
    schema: {
      tags: ['admin'],
      summary: 'List production requests',
      security: [{ AdminToken: [] }],
      querystring: Type.Object({ status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('granted'), Type.Literal('refused')])) }),
      response: { 200: Type.Object({ data: Type.Array(ProductionRequest) }) },
    },
  }, async (req) => ({ data: await listProductionRequests(db, config.appEnv, req.query.status) }));

  app.post('/production-requests/:request_id/grant', {
    schema: {
      tags: ['admin'],
      summary: 'Grant a production request',
      security: [{ AdminToken: [] }],
      params: Type.Object({ request_id: Type.String({ minLength: 1, maxLength: 100 }) }),
      response: {
        200: Type.Object({ data: Type.Intersect([ProductionRequest, Type.Object({ app_id: Type.String({ description: 'The production developer\'s first app' }) })]) }),
        404: ErrorBody,
        409: ErrorBody,
        503: ErrorBody,
      },
    },
  }, async (req) => ({ data: await withProductionTarget(config, (target) => grantProduction(db, config.appEnv, req.params.request_id, target)) }));

  app.post('/production-requests/:request_id/refuse', {
    schema: {
      tags: ['admin'],
      summary: 'Refuse a production request',
      security: [{ AdminToken: [] }],
      params: Type.Object({ request_id: Type.String({ minLength: 1, maxLength: 100 }) }),
      body: Type.Object({ reason: Type.String({ minLength: 1, maxLength: 1000, description: 'Why; the account reads it in its console' }) }, { additionalProperties: false }),
      response: { 200: Type.Object({ data: ProductionRequest }), 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
    },
  }, async (req) => ({ data: await refuseProduction(db, config.appEnv, req.params.request_id, req.body.reason) }));
};
