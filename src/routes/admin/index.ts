/**
 * The operator's admin API under `/admin/v1` (docs/api/admin.md). Registered only when ADMIN_TOKEN is
 * set; every route needs `Authorization: Bearer ${ADMIN_TOKEN}`.
 */
import { serviceRequestId } from '../../http/request-id.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { createDeveloper, InvalidRedirectUri, redirectUriErrors } from '../../domain/developers/create-developer.js';
import { importDirectory, UnknownImportDeveloper } from '../../domain/directory/import/import-directory.js';
import { seedDirectory, UnknownDeveloper } from '../../domain/directory/seed-directory.js';
import { createUser, newUserErrors, UserInputError } from '../../domain/users/create-user.js';
import { OPERATOR_TARGETS, operatorTransition, operatorTransitionErrors } from '../../domain/appointments/operator-transition.js';
import { CANCELLATION_REASON_TYPES } from '../../domain/appointments/cancel.js';
import { makeAdminGuard } from '../../http/admin-guard.js';
import { adminRequestLogRoutes } from './request-log.js';
import { adminWebhookRoutes } from './webhooks.js';
import { adminRateLimitRoutes } from './developer-limits.js';
import { adminPracticeRoutes } from './practices.js';
import { adminProductionRoutes } from './production-requests.js';
import { invalidFields, invalidInput, notFound } from '../../domain/errors.js';
import { ImportQuery, NewDeveloperBody, NewDeveloperResponse, NewUserBody, NewUserResponse, SeedBody, SeedResponse } from './schemas.js';

export interface AdminDeps {
  config: Config & { adminToken: string };
  db: Db;
}

const security = [{ AdminToken: [] }];
/** The message of the transition body's cross-field rule, on the field it is about. */
const ONLY_WITH_CANCELLED = { 'x-error-message': 'is allowed only with to=cancelled', 'x-error-field': 'cancellation_reason_type' };

export const adminRoutes: FastifyPluginAsyncTypebox<AdminDeps> = async (app, { config, db }) => {
  app.addHook('onRequest', makeAdminGuard(config.adminToken, db));
  await app.register(adminWebhookRoutes, { config, db });
  await app.register(adminRateLimitRoutes, { config, db });
  await app.register(adminRequestLogRoutes, { config, db });
  await app.register(adminPracticeRoutes, { config, db });
  await app.register(adminProductionRoutes, { config, db });

  app.post(
    '/developers',
    {
      config: { alsoCheck: (req) => redirectUriErrors((req.body as { redirect_uris?: unknown } | null)?.redirect_uris, config.appEnv) },
      schema: { tags: ['admin'], security, body: NewDeveloperBody, response: { 201: NewDeveloperResponse } },
    },
    async (req, reply) => {
      const errors = redirectUriErrors(req.body.redirect_uris, config.appEnv);
      if (errors.length) throw invalidFields(errors);
      try {
        const dev = await createDeveloper(db, { env: config.appEnv, name: req.body.name, redirectUris: req.body.redirect_uris ?? [] });
        return reply.code(201).send(dev);
      } catch (e) {
        if (e instanceof InvalidRedirectUri) throw invalidInput('redirect_uris', e.message);
        throw e;
      }
    },
  );

  app.post(
    '/users',
    {
      config: { alsoCheck: (req) => newUserErrors(db, config.appEnv, (req.body ?? {}) as Record<string, unknown>) },
      schema: { tags: ['admin'], security, body: NewUserBody, response: { 201: NewUserResponse } },
    },
    async (req, reply) => {
      try {
        const user = await createUser(db, {
          env: config.appEnv,
          email: req.body.email,
          password: req.body.password,
          role: req.body.role,
          providerId: req.body.provider_id ?? null,
        });
        return reply.code(201).send(user);
      } catch (e) {
        if (e instanceof UserInputError) throw invalidFields(e.errors);
        throw e;
      }
    },
  );

  // Directory import (docs/api/admin.md#directory-import-and-seed, docs/directory-format.md): the raw JSON or NDJSON document as
  // the body, so that errors can name lines. Parsed here as text, in its own encapsulated context.
  await app.register(async (sub) => {
    const asText = (_req: unknown, body: string, done: (e: Error | null, v?: unknown) => void) => done(null, body);
    sub.removeContentTypeParser(['application/json', 'text/plain']);
    sub.addContentTypeParser(['application/json', 'application/x-ndjson', 'application/ndjson', 'text/plain'], { parseAs: 'string' }, asText);
    sub.post(
      '/directory/import',
      {
        bodyLimit: 512 * 1024 * 1024,
        schema: { tags: ['admin'], security, querystring: ImportQuery, response: { 200: SeedResponse } },
      },
      async (req) => {
        const type = String(req.headers['content-type'] ?? '');
        const format = /ndjson/.test(type) ? 'ndjson' : /json/.test(type) ? 'json' : undefined;
        try {
          const r = await importDirectory(db, String(req.body ?? ''), { env: config.appEnv, developerId: (req.query as { developer_id?: string }).developer_id, format });
          if (r.ok) return r.summary;
          throw invalidFields(r.errors.map((e) => ({ ...(e.field ? { field: e.field } : {}), message: e.line ? `line ${e.line}: ${e.message}` : e.message, line: e.line })),
          );
        } catch (e) {
          if (e instanceof UnknownImportDeveloper) throw notFound(e.message, 'developer_id');
          throw e;
        }
      },
    );
  });

  app.post(
    '/directory/seed',
    { schema: { tags: ['admin'], security, body: SeedBody, response: { 200: SeedResponse } } },
    async (req) => {
      try {
        return await seedDirectory(db, {
          env: config.appEnv,
          providers: req.body.providers,
          ...(req.body.seed !== undefined ? { seed: req.body.seed } : {}),
          ...(req.body.developer_id ? { developerId: req.body.developer_id } : {}),
        });
      } catch (e) {
        if (e instanceof UnknownDeveloper) throw notFound(e.message, 'developer_id');
        throw e;
      }
    },
  );
  // docs/api/admin.md#appointment-transitions `appointment transition`: a provider- or service-side move; fires the webhook.
  app.post(
    '/appointments/:appointment_id/transition',
    {
      config: { alsoCheck: (req) => operatorTransitionErrors(req.body) },
      schema: {
        tags: ['admin'],
        security,
        summary: 'Move an appointment as the provider or the service would',
        params: Type.Object({ appointment_id: Type.String({ minLength: 1 }) }),
        body: Type.Object(
          {
            to: Type.String({ enum: OPERATOR_TARGETS, description: 'The status to move the appointment to' }),
            cancellation_reason_type: Type.Optional(Type.String({ enum: [...CANCELLATION_REASON_TYPES], description: 'Only with `to: cancelled`' })),
          },
          {
            // A reason type only with a cancellation.
            if: { properties: { cancellation_reason_type: { type: 'string' } }, required: ['cancellation_reason_type'] },
            // (Every property listed, so validators that treat a subschema's properties as closed accept a valid body.)
            then: { properties: { to: { const: 'cancelled', ...ONLY_WITH_CANCELLED }, cancellation_reason_type: { type: 'string' } }, ...ONLY_WITH_CANCELLED },
          },
        ),
        response: {
          200: Type.Object({
            appointment_id: Type.String(),
            appointment_status: Type.String(),
            developer_patient_id: Type.Optional(Type.String()),
          }),
        },
      },
    },
    async (req) => operatorTransition(db, config.appEnv, req.params.appointment_id, req.body, { requestId: serviceRequestId(req) }),
  );
};
