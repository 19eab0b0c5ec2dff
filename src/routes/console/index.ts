/**
 * The Console API at `/console/v1` (docs/decisions/0015-developer-console.md, "One API, one page";
 * docs/console.md): the console guard on every route of this scope and of the sub-plugins registered
 * in it, `GET /me`, apps and credentials, and the production request.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { consoleOverview } from '../../domain/console/overview.js';
import { requestProduction } from '../../domain/console/production.js';
import { consoleUserOf } from '../../http/console-request.js';
import { errorResponses } from '../v1/common-schemas.js';
import { consoleAppRoutes } from './apps.js';
import { Me, ProductionRequest, ProductionRequestBody } from './schemas.js';
import { consoleSecurity } from './security.js';

export { consoleSecurity };

/** What every Console API plugin receives. */
export interface ConsoleRouteDeps {
  config: Config;
  db: Db;
}

/** The `/console/v1` scope; `consoleGuard` (src/http/console-guard.ts) runs for every route registered here. */
export const consoleRoutes: FastifyPluginAsyncTypebox<ConsoleRouteDeps & { consoleGuard: onRequestAsyncHookHandler }> = async (app, opts) => {
  const deps: ConsoleRouteDeps = { config: opts.config, db: opts.db };
  const { db } = deps;
  app.addHook('onRequest', opts.consoleGuard);

  app.get('/me', {
    schema: {
      tags: ['console'],
      summary: 'Who is signed in: the account, its developers, its production access',
      security: consoleSecurity,
      response: { 200: Type.Object({ data: Me }), ...errorResponses() },
    },
  }, async (req) => ({ data: await consoleOverview(db, consoleUserOf(req)) }));

  app.post('/production-request', {
    schema: {
      tags: ['console'],
      summary: 'Ask for production access',
      security: consoleSecurity,
      body: ProductionRequestBody,
      response: { 201: Type.Object({ data: ProductionRequest }), ...errorResponses(400, 409) },
    },
  }, async (req, reply) => {
    const made = await requestProduction(db, consoleUserOf(req), { company: req.body.company, useCase: req.body.use_case });
    return reply.code(201).send({ data: made });
  });

  await app.register(consoleAppRoutes, { db });

  // ---- Console API sub-areas (webhooks, delivery log, request log, usage, sandbox tools): register them here with `deps`. ----
  // ---- end of sub-areas ----
};
