/**
 * The developer console at `/console` (docs/decisions/0015-developer-console.md, "One API, one page";
 * docs/console.md, "The console pages"): a static page whose script (`app/main.ts`) signs a developer
 * up or in with the authorization code flow and PKCE against the console's first-party public client
 * (`consoleClientId`), then calls only the Console API (`/console/v1`). Built like `/demo` and
 * `/practice`: the script is bundled with esbuild on the first request and kept in memory; a strict
 * Content-Security-Policy allows only same-origin scripts, styles and API calls. Served in every
 * environment.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Config } from '../../config.js';
import { bundleScript, escapeAttr, pageCsp, securePage } from '../web-app/serve.js';
import { consoleClientId, consoleRedirectUri } from '../../domain/console/console-client.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Serves the page, its script, its style sheet, its icon and the sign-in callback (the same page). */
export const consolePageRoutes: FastifyPluginAsync<{ config: Config }> = async (app, { config }) => {
  const csp = pageCsp(config);
  let script: Promise<string> | undefined;
  let html: Promise<string> | undefined;
  const secure = (reply: FastifyReply): FastifyReply => securePage(reply, csp);

  const page = async (reply: FastifyReply) => {
    html ??= readFile(join(here, 'app/index.html'), 'utf8').then((text) =>
      text
        .replace('{{client_id}}', escapeAttr(consoleClientId(config.appEnv)))
        .replace('{{auth_url}}', escapeAttr(config.authUrl))
        .replace('{{redirect_uri}}', escapeAttr(consoleRedirectUri(config.publicBaseUrl)))
        .replaceAll('{{env}}', escapeAttr(config.appEnv)),
    );
    return secure(reply).type('text/html; charset=utf-8').send(await html);
  };

  app.get('/console', { schema: { hide: true } }, (_req, reply) => page(reply));
  app.get('/console/', { schema: { hide: true } }, (_req, reply) => reply.redirect('/console'));
  app.get('/console/callback', { schema: { hide: true } }, (_req, reply) => page(reply));
  app.get('/console/app.js', { schema: { hide: true } }, async (_req, reply) => {
    script ??= bundleScript(join(here, 'app/main.ts')).catch((e: unknown) => {
      script = undefined;
      throw e;
    });
    return secure(reply).type('text/javascript; charset=utf-8').send(await script);
  });
  app.get('/console/app.css', { schema: { hide: true } }, async (_req, reply) =>
    secure(reply).type('text/css; charset=utf-8').send(await readFile(join(here, 'app/app.css'), 'utf8')),
  );
  app.get('/console/favicon.svg', { schema: { hide: true } }, async (_req, reply) =>
    secure(reply)
      .type('image/svg+xml')
      .send('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#3b2f86"/><path d="M4 5l3 3-3 3M8 11h4" stroke="#fff" stroke-width="1.6" fill="none"/></svg>'),
  );
};
