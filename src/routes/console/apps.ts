/**
 * The console's apps and credentials (docs/console.md, "Apps"; docs/decisions/0015-developer-console.md):
 * thin handlers over src/domain/console. Every route sees only the account's own developers' apps.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../../db/database.js';
import { createApp, getApp, listApps, setRedirectUris } from '../../domain/console/apps.js';
import { revokeAppClient, rotateAppSecret } from '../../domain/console/credentials.js';
import { consoleUserOf } from '../../http/console-request.js';
import { errorResponses } from '../v1/common-schemas.js';
import { consoleSecurity } from './security.js';
import { App, AppIdParams, Client, ClientParams, NewAppBody, RedirectUrisBody, RotateBody } from './schemas.js';

export const consoleAppRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, { db }) => {
  const common = { tags: ['console'], security: consoleSecurity };

  app.get('/apps', {
    schema: { ...common, summary: 'List your apps', response: { 200: Type.Object({ data: Type.Array(App) }) } },
  }, async (req) => ({ data: await listApps(db, consoleUserOf(req)) }));

  app.post('/apps', {
    schema: { ...common, summary: 'Create an app', body: NewAppBody, response: { 201: Type.Object({ data: App }), ...errorResponses(400) } },
  }, async (req, reply) => {
    const created = await createApp(db, consoleUserOf(req), { name: req.body.name, developerId: req.body.developer_id, redirectUris: req.body.redirect_uris });
    return reply.code(201).header('cache-control', 'no-store').send({ data: created });
  });

  app.get('/apps/:app_id', {
    schema: { ...common, summary: 'Read an app and its clients', params: AppIdParams, response: { 200: Type.Object({ data: App }), ...errorResponses(404) } },
  }, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    return { data: await getApp(db, consoleUserOf(req), req.params.app_id) };
  });

  app.put('/apps/:app_id/redirect_uris', {
    schema: { ...common, summary: 'Replace the user client\'s redirect URIs', params: AppIdParams, body: RedirectUrisBody, response: { 200: Type.Object({ data: App }), ...errorResponses(400, 404) } },
  }, async (req) => ({ data: await setRedirectUris(db, consoleUserOf(req), req.params.app_id, req.body.redirect_uris) }));

  app.post('/apps/:app_id/credentials/:client_id/rotate', {
    schema: { ...common, summary: 'Rotate a machine secret, with an optional overlap', params: ClientParams, body: RotateBody, response: { 200: Type.Object({ data: Client }), ...errorResponses(400, 404, 409) } },
  }, async (req, reply) => {
    const client = await rotateAppSecret(db, consoleUserOf(req), req.params.app_id, req.params.client_id, req.body.grace_period_seconds);
    return reply.header('cache-control', 'no-store').send({ data: client });
  });

  app.delete('/apps/:app_id/credentials/:client_id', {
    schema: { ...common, summary: 'Revoke a client', params: ClientParams, response: { 200: Type.Object({ data: Client }), ...errorResponses(404) } },
  }, async (req) => ({ data: await revokeAppClient(db, consoleUserOf(req), req.params.app_id, req.params.client_id) }));
};
