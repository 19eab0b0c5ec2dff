/**
 * The Console API at `/console/v1` (docs/decisions/0015-developer-console.md, "One API, one page";
 * docs/console.md): the console guard on every route of this scope and of the sub-plugins registered
 * in it, `GET /me`, apps and credentials, and the production request.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { AttachmentStore } from '../../domain/attachments/store.js';
import type { BookingOutcomePolicy } from '../../domain/appointments/outcome-policy.js';
import { consoleOverview } from '../../domain/console/overview.js';
import { notFound } from '../../domain/errors.js';
import { requestProduction } from '../../domain/console/production.js';
import { consoleUserOf } from '../../http/console-request.js';
import { errorResponses } from '../v1/common-schemas.js';
import { consoleAppRoutes } from './apps.js';
import { consoleLogRoutes } from './tools/logs.js';
import { consoleSandboxRoutes } from './tools/sandbox.js';
import { consoleWebhookRoutes } from './tools/webhooks.js';
import { Me, ProductionRequest, ProductionRequestBody } from './schemas.js';
import { consoleSecurity } from './security.js';

export { consoleSecurity };

/** What every Console API plugin receives. */
export interface ConsoleRouteDeps {
  config: Config;
  db: Db;
  /** Outcomes forced on bookings (the sandbox fixtures'), for the sandbox tools' fixture runs. */
  outcomes: BookingOutcomePolicy;
  /** Where attachment bytes live: a sandbox reset removes them with their rows (docs/decisions/0016-attachment-files.md). */
  attachments: AttachmentStore;
}

/** The tool routes' ownership check: a developer the signed-in account does not own is `not_found` (as one that does not exist). */
function ownsDeveloper(req: FastifyRequest, developerId: string): void {
  if (!consoleUserOf(req).developerIds.includes(developerId)) throw notFound(`developer ${developerId} not found`, 'developer_id');
}

/** The `/console/v1` scope; `consoleGuard` (src/http/console-guard.ts) runs for every route registered here. */
export const consoleRoutes: FastifyPluginAsyncTypebox<ConsoleRouteDeps & { consoleGuard: onRequestAsyncHookHandler }> = async (app, opts) => {
  const deps: ConsoleRouteDeps = { config: opts.config, db: opts.db, outcomes: opts.outcomes, attachments: opts.attachments };
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

  // The developer tools (webhooks, delivery log, request log, usage, sandbox), each under /developers/{developer_id}.
  const tools = { ...deps, ownsDeveloper, security: consoleSecurity };
  await app.register(consoleWebhookRoutes, tools);
  await app.register(consoleLogRoutes, tools);
  await app.register(consoleSandboxRoutes, tools);
};
