/**
 * Console API: sandbox tools (docs/console.md, "Sandbox tools"): reset your sandbox, list the
 * fixtures and run one. Thin handlers over src/domain/console/sandbox.ts; the developer in the path
 * must be the signed-in account's (`ownsDeveloper`), else 404. Production answers 403 (`refused`).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { listFixtures, resetSandbox, runFixture } from '../../../domain/console/sandbox.js';
import { errorResponses } from '../../v1/common-schemas.js';
import { DeveloperParams, type ConsoleToolDeps } from './deps.js';

const Fixture = Type.Object({
  name: Type.String(),
  provider_location_id: Type.String(),
  outcome: Type.String({ description: 'What running it does, and what follows' }),
  webhook: Type.Boolean({ description: 'Whether a webhook follows without anyone else acting' }),
});

const Counts = Type.Object({
  appointments: Type.Integer(), patients: Type.Integer(), holds: Type.Integer(), attachments: Type.Integer(), outbox_events: Type.Integer(),
  webhook_deliveries: Type.Integer(), idempotency_keys: Type.Integer(), request_log: Type.Integer(),
});

export const consoleSandboxRoutes: FastifyPluginAsyncTypebox<ConsoleToolDeps> = async (app, { config, db, outcomes, attachments, ownsDeveloper, security }) => {
  const env = config.appEnv;
  const tags = ['console'];

  app.post(
    '/developers/:developer_id/sandbox/reset',
    {
      schema: {
        tags, security,
        summary: 'Reset your sandbox',
        description: "Deletes your sandbox appointments, patients, attachments, webhook events and deliveries, Idempotency-Key records and request log, in one transaction, and answers how many of each went. Your receiver, credentials and directory stay; other developers' data is never touched. 403 in production.",
        params: DeveloperParams,
        response: { 200: Type.Object({ data: Counts }), ...errorResponses(404) },
      },
    },
    async (req) => {
      await ownsDeveloper(req, req.params.developer_id);
      return { data: await resetSandbox(db, env, req.params.developer_id, attachments) };
    },
  );

  app.get(
    '/developers/:developer_id/sandbox/fixtures',
    {
      schema: {
        tags, security,
        summary: 'The sandbox fixtures you can run',
        description: 'Each fixture provider-location, its fixed outcome, and whether a webhook follows on its own (docs/api/sandbox.md, "Fixture provider-locations"). 403 in production.',
        params: DeveloperParams,
        response: { 200: Type.Object({ data: Type.Array(Fixture) }), ...errorResponses(404) },
      },
    },
    async (req) => {
      await ownsDeveloper(req, req.params.developer_id);
      return { data: listFixtures(env) };
    },
  );

  app.post(
    '/developers/:developer_id/sandbox/fixtures/:name/run',
    {
      schema: {
        tags, security,
        summary: "Run a fixture's outcome",
        description: "Books a test patient at the fixture's next free time with your machine credential, through the normal booking (and, for `reschedule-failed`, a reschedule); the service then settles it as the fixture says and the webhook follows. 404 for an unknown fixture; 409 when the fixture has no free time or you have no machine credential; 403 in production.",
        params: Type.Object({ developer_id: DeveloperParams.properties.developer_id, name: Type.String({ minLength: 1, maxLength: 50 }) }),
        response: {
          201: Type.Object({ data: Type.Object({ fixture: Fixture, appointment_id: Type.String(), appointment_status: Type.String(), start_time: Type.String() }) }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (req, reply) => {
      await ownsDeveloper(req, req.params.developer_id);
      return reply.code(201).send({ data: await runFixture(db, env, req.params.developer_id, req.params.name, { outcomes }) });
    },
  );
};
