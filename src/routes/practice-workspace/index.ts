/**
 * The practice workspace at `/practice` (docs/decisions/0014-practice-workspace.md, docs/practice-guide.md):
 * a static page whose script (`app/main.ts`) signs a practice's staff in with the authorization code
 * flow and PKCE against the first-party public client of its environment (`workspaceClientId`), then calls only the
 * Practice API (`/practice/v1`). Built like `/demo`: the script is bundled with esbuild on the first
 * request and kept in memory; a strict Content-Security-Policy allows only same-origin scripts, styles
 * and API calls. Unlike `/demo` it is served in every environment.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Config } from '../../config.js';
import { bundleScript, escapeAttr, pageCsp, securePage } from '../web-app/serve.js';
import { workspaceClientId, workspaceRedirectUri } from '../../domain/practices/workspace-client.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Serves the page, its script, its style sheet and the sign-in callback (the same page). */
export const practiceWorkspaceRoutes: FastifyPluginAsync<{ config: Config }> = async (app, { config }) => {
  const redirectUri = workspaceRedirectUri(config.publicBaseUrl);
  const csp = pageCsp(config);
  let script: Promise<string> | undefined;
  let html: Promise<string> | undefined;
  const secure = (reply: FastifyReply): FastifyReply => securePage(reply, csp);

  const page = async (reply: FastifyReply) => {
    html ??= readFile(join(here, 'app/index.html'), 'utf8').then((text) =>
      text
        .replace('{{client_id}}', escapeAttr(workspaceClientId(config.appEnv)))
        .replace('{{auth_url}}', escapeAttr(config.authUrl))
        .replace('{{redirect_uri}}', escapeAttr(redirectUri)),
    );
    return secure(reply).type('text/html; charset=utf-8').send(await html);
  };

  app.get('/practice', { schema: { hide: true } }, (_req, reply) => page(reply));
  app.get('/practice/', { schema: { hide: true } }, (_req, reply) => reply.redirect('/practice'));
  app.get('/practice/callback', { schema: { hide: true } }, (_req, reply) => page(reply));
  app.get('/practice/app.js', { schema: { hide: true } }, async (_req, reply) => {
    script ??= bundleScript(join(here, 'app/main.ts')).catch((e: unknown) => {
      script = undefined;
      throw e;
    });
    return secure(reply).type('text/javascript; charset=utf-8').send(await script);
  });
  app.get('/practice/app.css', { schema: { hide: true } }, async (_req, reply) =>
    secure(reply).type('text/css; charset=utf-8').send(await readFile(join(here, 'app/app.css'), 'utf8')),
  );
  app.get('/practice/favicon.svg', { schema: { hide: true } }, async (_req, reply) =>
    secure(reply)
      .type('image/svg+xml')
      .send('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#17603a"/><path d="M4 5h8v1H4zm0 3h8v1H4zm0 3h5v1H4z" fill="#fff"/></svg>'),
  );
};
