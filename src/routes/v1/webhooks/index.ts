/**
 * `POST /v1/webhook/mock-request` (sandbox only; docs/api/webhooks.md#mock-delivery, docs/api/webhooks.md): sends one signed example to
 * `webhook_url` and returns the body it sent, byte for byte (no `request_id`). The receiver's answer is
 * reported in the `webhook-delivery-status` response header (its HTTP status, or `error`); a target the
 * policy refuses at send time (e.g. a name resolving to a link-local address) is a 400 on `webhook_url`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../../config.js';
import { invalidFields, invalidInput } from '../../../domain/errors.js';
import { sendMockWebhook } from '../../../webhooks/mock-request.js';
import { webhookTargetErrors } from '../../../webhooks/endpoints.js';
import { policyFor } from '../../../webhooks/target-policy.js';
import { errorResponses } from '../common-schemas.js';

const MockBody = Type.Object({
  webhook_url: Type.String({ maxLength: 2048, description: 'A valid URL that receives the mock request' }),
  webhook_key: Type.String({ maxLength: 1024, description: 'Key for the signature, base64' }),
  appointment_update_type: Type.Optional(Type.Union([Type.Literal('updated'), Type.Literal('cancelled'), Type.Literal('created')])),
});

const WebhookEvent = Type.Object({
  event_type: Type.String(),
  webhook_timestamp: Type.String(),
  data: Type.Object({
    data_type: Type.String(),
    appointment_data: Type.Object({
      appointment_id: Type.String(),
      appointment_updated_timestamp: Type.String(),
      appointment_update_type: Type.String(),
      changed_attributes: Type.Array(
        Type.Object({
          attribute_path: Type.String(),
          attachment_type: Type.Optional(Type.String({ description: 'With `patient.uploaded_attachments`: the type of the uploaded file' })),
        }),
      ),
    }),
  }),
});

export const webhookRoutes: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  if (config.appEnv !== 'sandbox') return;
  const policy = policyFor('sandbox', config.allowPrivateWebhookTargets);
  const targetErrors = (body: unknown) => {
    const b = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    return webhookTargetErrors({ url: b.webhook_url, key: b.webhook_key }, policy, { url: 'webhook_url', key: 'webhook_key' });
  };
  app.post(
    '/v1/webhook/mock-request',
    {
      onRequest: app.guard(),
      config: { alsoCheck: (req) => targetErrors(req.body) },
      schema: {
        tags: ['webhooks'],
        summary: 'Send a signed example webhook (sandbox only)',
        body: MockBody,
        response: { 200: WebhookEvent, ...errorResponses(400) },
      },
    },
    async (req, reply) => {
      const errors = targetErrors(req.body);
      if (errors.length) throw invalidFields(errors);
      const { raw, result } = await sendMockWebhook(
        { url: req.body.webhook_url, keyBase64: req.body.webhook_key, updateType: req.body.appointment_update_type ?? 'updated' },
        policy,
      );
      if (result.refused) throw invalidInput('webhook_url', result.error ?? 'is not allowed');
      // The receiver's status is reported for public receivers only: what an address inside a
      // network answered is never passed on (docs/webhooks.md, "Where webhooks may go").
      if (!result.privateTarget) reply.header('webhook-delivery-status', result.statusCode === null ? 'error' : String(result.statusCode));
      // The string itself, not a re-serialised object: the answer is exactly the bytes sent and signed.
      // (Fastify sends a string with a JSON content type unchanged; the schema above documents its shape.)
      return reply.type('application/json; charset=utf-8').send(raw as never);
    },
  );
};
