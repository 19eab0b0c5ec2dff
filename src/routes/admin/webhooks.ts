/**
 * Admin API for webhooks (docs/api/admin.md#webhooks): the developer's receiver, what was sent, and replay (which
 * includes events that found no receiver registered; never the developer's own changes; docs/api/webhooks.md#which-changes-are-sent).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { invalidFields, invalidInput, notFound } from '../../domain/errors.js';
import { setWebhookEndpoint, WebhookInputError, webhookTargetErrors } from '../../webhooks/endpoints.js';
import { policyFor } from '../../webhooks/target-policy.js';
import { listDeliveries, replayEvents } from '../../webhooks/worker.js';

const security = [{ AdminToken: [] }];

const Delivery = Type.Object({
  event_id: Type.String(),
  appointment_id: Type.String(),
  update_type: Type.String(),
  changed_attributes: Type.Array(Type.Object({ attribute_path: Type.String(), attachment_type: Type.Optional(Type.String()) })),
  event_status: Type.String(),
  attempt: Type.Integer(),
  url: Type.String(),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  latency_ms: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  attempted_at: Type.String({ format: 'date-time' }),
});

export const adminWebhookRoutes: FastifyPluginAsyncTypebox<{ config: Config; db: Db }> = async (app, { config, db }) => {
  const policy = policyFor(config.appEnv, config.allowPrivateWebhookTargets);
  const targetErrors = (body: unknown) => {
    const b = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    return webhookTargetErrors({ url: b.url, key: b.key }, policy, { url: 'url', key: 'key' });
  };
  app.put(
    '/developers/:developer_id/webhook',
    {
      config: { alsoCheck: (req) => targetErrors(req.body) },
      schema: {
        tags: ['admin'],
        summary: "Set a developer's webhook receiver",
        security,
        params: Type.Object({ developer_id: Type.String() }),
        body: Type.Object({ url: Type.String({ maxLength: 2048 }), key: Type.String({ maxLength: 1024 }) }),
        response: { 200: Type.Object({ developer_id: Type.String(), url: Type.String() }) },
      },
    },
    async (req) => {
      const errors = targetErrors(req.body);
      if (errors.length) throw invalidFields(errors);
      try {
        await setWebhookEndpoint(db, { env: config.appEnv, developerId: req.params.developer_id, url: req.body.url, key: req.body.key, allowPrivateTargets: config.allowPrivateWebhookTargets });
      } catch (e) {
        if (e instanceof WebhookInputError) throw e.field === 'developer_id' ? notFound(e.message, 'developer_id') : invalidInput(e.field, e.message);
        throw e;
      }
      return { developer_id: req.params.developer_id, url: req.body.url };
    },
  );

  app.get(
    '/webhook-deliveries',
    {
      schema: {
        tags: ['admin'],
        summary: 'Webhook delivery attempts of a developer, newest first',
        security,
        querystring: Type.Object({ developer_id: Type.String(), limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }) }),
        response: { 200: Type.Object({ data: Type.Array(Delivery) }) },
      },
    },
    async (req) => {
      const rows = await listDeliveries(db, req.query.developer_id, req.query.limit);
      return { data: rows.map((r) => ({ ...r, attempted_at: r.attempted_at.toISOString() })) };
    },
  );

  app.post(
    '/webhook-replays',
    {
      schema: {
        tags: ['admin'],
        summary: 'Send again every delivered, failed or no_endpoint event of a developer since a time',
        security,
        body: Type.Object({ developer_id: Type.String(), since: Type.String({ format: 'date-time' }) }),
        response: { 202: Type.Object({ replayed: Type.Integer() }) },
      },
    },
    async (req, reply) => reply.code(202).send({ replayed: await replayEvents(db, req.body.developer_id, new Date(req.body.since)) }),
  );
};
