/**
 * Console API: the developer's webhook receiver, test event, delivery log and replay (docs/console.md,
 * "Webhooks"). Thin handlers over src/domain/console/{webhooks,deliveries}.ts; the developer in the
 * path must be the signed-in account's (`ownsDeveloper`), else 404.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { isLocalSandbox } from '../../../config.js';
import { DELIVERY_STATUSES, deliveryLog, replayDelivery, replayFailedSince } from '../../../domain/console/deliveries.js';
import { getReceiver, sendTestEvent, setReceiver } from '../../../domain/console/webhooks.js';
import { webhookTargetErrors } from '../../../webhooks/endpoints.js';
import { policyFor } from '../../../webhooks/target-policy.js';
import { errorResponses } from '../../v1/common-schemas.js';
import { DeveloperParams, type ConsoleToolDeps } from './deps.js';

const Receiver = Type.Object({
  url: Type.String(),
  updated_at: Type.String({ format: 'date-time' }),
  previous_key_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Until when the replaced key still signs; null when no key overlaps' }),
});

const Answer = {
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'Null when nothing came back or the answer is withheld' }),
  latency_ms: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  response_excerpt: Type.Union([Type.String(), Type.Null()], { description: "The first bytes (at most 256) of the receiver's answer" }),
  answer_withheld: Type.Boolean({ description: 'The receiver is at a private address whose answers are not shown here' }),
};

const Attempt = Type.Object({
  attempted_at: Type.String({ format: 'date-time' }),
  event_id: Type.String({ description: 'The `webhook-id` header sent' }),
  event_kind: Type.Union([Type.Literal('appointment'), Type.Literal('test')]),
  appointment_id: Type.Union([Type.String(), Type.Null()]),
  update_type: Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('cancelled'), Type.Null()]),
  changed_attributes: Type.Array(Type.Object({ attribute_path: Type.String(), attachment_type: Type.Optional(Type.String()) })),
  event_status: Type.String({ description: "The event's status now: pending, delivered or failed" }),
  attempt: Type.Integer(),
  url: Type.String(),
  ...Answer,
});

export const consoleWebhookRoutes: FastifyPluginAsyncTypebox<ConsoleToolDeps> = async (app, { config, db, ownsDeveloper, security }) => {
  const env = config.appEnv;
  const outbound = { allowPrivateTargets: config.allowPrivateWebhookTargets, reflectPrivateAnswers: isLocalSandbox(env, config.host) };
  const policy = policyFor(env, config.allowPrivateWebhookTargets);
  const targetErrors = (body: unknown) => {
    const b = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    return webhookTargetErrors({ url: b.url, key: b.key }, policy, { url: 'url', key: 'key' });
  };
  const tags = ['console'];

  app.put(
    '/developers/:developer_id/webhook',
    {
      config: { alsoCheck: (req) => targetErrors(req.body) },
      schema: {
        tags, security,
        summary: 'Set your webhook receiver',
        description: 'Sets the URL deliveries go to and the signing key (base64). Without `key` a random 32-byte key is generated and answered once as `generated_key`; it is never shown again. A new key replaces the old one, which keeps signing for 24 hours. The URL follows the outbound address rules (docs/webhooks.md, "Where webhooks may go"): 400 names `url` or `key`.',
        params: DeveloperParams,
        body: Type.Object({ url: Type.String({ maxLength: 2048 }), key: Type.Optional(Type.String({ maxLength: 1024 })) }),
        response: {
          200: Type.Object({ data: Type.Object({ url: Type.String(), generated_key: Type.Union([Type.String(), Type.Null()]), previous_key_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]) }) }),
          ...errorResponses(400, 404),
        },
      },
    },
    async (req) => {
      await ownsDeveloper(req, req.params.developer_id);
      return { data: await setReceiver(db, env, req.params.developer_id, req.body, outbound) };
    },
  );

  app.get(
    '/developers/:developer_id/webhook',
    {
      schema: {
        tags, security,
        summary: 'Your webhook receiver',
        description: 'The receiver URL and whether a replaced key still signs; the key itself is never shown. `data` is null when no receiver is set.',
        params: DeveloperParams,
        response: { 200: Type.Object({ data: Type.Union([Receiver, Type.Null()]) }), ...errorResponses(404) },
      },
    },
    async (req) => {
      await ownsDeveloper(req, req.params.developer_id);
      return { data: await getReceiver(db, env, req.params.developer_id) };
    },
  );

  app.post(
    '/developers/:developer_id/webhook/test',
    {
      schema: {
        tags, security,
        summary: 'Send a test event to your receiver',
        description: 'Sends one signed event with `event_type` `test` now, with the same headers and signatures as every delivery, and answers what the receiver answered. The attempt appears in the delivery log; it is not retried by itself. 409 when no receiver is set.',
        params: DeveloperParams,
        response: { 200: Type.Object({ data: Type.Object({ event_id: Type.String(), delivered: Type.Boolean(), ...Answer }) }), ...errorResponses(404, 409) },
      },
    },
    async (req) => {
      await ownsDeveloper(req, req.params.developer_id);
      return { data: await sendTestEvent(db, env, req.params.developer_id, outbound) };
    },
  );

  app.get(
    '/developers/:developer_id/webhook/deliveries',
    {
      schema: {
        tags, security,
        summary: 'Your webhook delivery log',
        description: "Every delivery attempt, newest first: time, event, appointment, update type, attempt number, status code, latency, error and the first bytes of the receiver's answer. Filter by `appointment_id` and by the event's `status`; page with `next_cursor`. 400 names a bad `status` or `cursor`.",
        params: DeveloperParams,
        querystring: Type.Object({
          appointment_id: Type.Optional(Type.String({ maxLength: 100 })),
          status: Type.Optional(Type.String({ maxLength: 20, description: `One of ${DELIVERY_STATUSES.join(', ')}` })),
          cursor: Type.Optional(Type.String({ maxLength: 200 })),
          page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
        }),
        response: { 200: Type.Object({ data: Type.Object({ deliveries: Type.Array(Attempt), next_cursor: Type.Union([Type.String(), Type.Null()]) }) }), ...errorResponses(400, 404) },
      },
    },
    async (req) => {
      await ownsDeveloper(req, req.params.developer_id);
      return { data: await deliveryLog(db, env, req.params.developer_id, req.query) };
    },
  );

  app.post(
    '/developers/:developer_id/webhook/deliveries/:event_id/replay',
    {
      schema: {
        tags, security,
        summary: 'Send one event again',
        description: 'A delivered, failed or `no_endpoint` event becomes due now with a fresh 48-hour retry window; the delivery worker sends it within seconds. 404 for an event that is not yours; 409 for your own change (never sent) or an event already waiting.',
        params: Type.Object({ developer_id: DeveloperParams.properties.developer_id, event_id: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 202: Type.Object({ data: Type.Object({ event_id: Type.String(), status: Type.Literal('pending') }) }), ...errorResponses(404, 409) },
      },
    },
    async (req, reply) => {
      await ownsDeveloper(req, req.params.developer_id);
      return reply.code(202).send({ data: await replayDelivery(db, env, req.params.developer_id, req.params.event_id) });
    },
  );

  app.post(
    '/developers/:developer_id/webhook/replays',
    {
      schema: {
        tags, security,
        summary: 'Send every failed event since a time again',
        description: 'Every failed or `no_endpoint` event that occurred at or after `since` becomes due now with a fresh 48-hour window; answers how many.',
        params: DeveloperParams,
        body: Type.Object({ since: Type.String({ format: 'date-time' }) }),
        response: { 202: Type.Object({ data: Type.Object({ replayed: Type.Integer() }) }), ...errorResponses(400, 404) },
      },
    },
    async (req, reply) => {
      await ownsDeveloper(req, req.params.developer_id);
      return reply.code(202).send({ data: await replayFailedSince(db, env, req.params.developer_id, new Date(req.body.since)) });
    },
  );
};
