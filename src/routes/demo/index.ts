/**
 * The booking demo at `/demo` (sandbox only): a patient signs in with the authorization code flow
 * and PKCE, searches providers by ZIP code and specialty, sees availability, books, lists and
 * cancels their own appointments. The page is static HTML; its script (`app/main.ts`, which uses
 * `@carebook/client`) is bundled with esbuild on the first request and kept in memory. A strict
 * Content-Security-Policy allows only same-origin scripts, styles and API calls.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Config } from '../../config.js';
import { bundleScript, escapeAttr, pageCsp, securePage } from '../web-app/serve.js';
import type { Db } from '../../db/database.js';

const here = dirname(fileURLToPath(import.meta.url));

export const demoRoutes: FastifyPluginAsync<{ config: Config; db: Db }> = async (app, { config, db }) => {
  const redirectUri = `${config.publicBaseUrl}/demo/callback`;
  let script: Promise<string> | undefined;
  const csp = pageCsp(config);
  const secure = (reply: FastifyReply): FastifyReply => securePage(reply, csp);

  const page = async (reply: FastifyReply) => {
    const client = await db
      .selectFrom('oauth_clients')
      .select('client_id')
      .where('env', '=', config.appEnv)
      .where('kind', '=', 'public')
      .where((eb) => eb(eb.val(redirectUri), '=', eb.fn.any('redirect_uris')))
      .orderBy('client_id')
      .executeTakeFirst();
    if (!client) return secure(reply).code(404).type('text/plain').send('No user client has the demo redirect URI; run the sandbox bootstrap.');
    const html = (await readFile(join(here, 'app/index.html'), 'utf8'))
      .replace('{{client_id}}', escapeAttr(client.client_id))
      .replace('{{auth_url}}', escapeAttr(config.authUrl))
      .replace('{{redirect_uri}}', escapeAttr(redirectUri));
    return secure(reply).type('text/html; charset=utf-8').send(html);
  };

  app.get('/demo', { schema: { hide: true } }, (_req, reply) => page(reply));
  app.get('/demo/', { schema: { hide: true } }, (_req, reply) => reply.redirect('/demo'));
  app.get('/demo/callback', { schema: { hide: true } }, (_req, reply) => page(reply));
  app.get('/demo/app.js', { schema: { hide: true } }, async (_req, reply) => {
    script ??= bundleScript(join(here, 'app/main.ts')).catch((e: unknown) => {
      script = undefined;
      throw e;
    });
    return secure(reply).type('text/javascript; charset=utf-8').send(await script);
  });
  app.get('/demo/favicon.svg', { schema: { hide: true } }, async (_req, reply) =>
    secure(reply).type('image/svg+xml').send('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#0b5cad"/><path d="M7 3h2v4h4v2H9v4H7V9H3V7h4z" fill="#fff"/></svg>'),
  );
  app.get('/demo/app.css', { schema: { hide: true } }, async (_req, reply) =>
    secure(reply).type('text/css; charset=utf-8').send(await readFile(join(here, 'app/app.css'), 'utf8')),
  );
};
