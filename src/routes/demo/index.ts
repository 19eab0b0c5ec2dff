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
import type { Db } from '../../db/database.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Bundles the demo's browser script with esbuild's JS API (no files written). */
export async function bundleDemoScript(): Promise<string> {
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    entryPoints: [join(here, 'app/main.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
  });
  return out.outputFiles[0]!.text;
}

const escapeAttr = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The demo's Content-Security-Policy: nothing but this origin (and the auth server's, for tokens). */
export function demoCsp(config: Config): string {
  const api = new URL(config.publicBaseUrl).origin;
  const auth = new URL(config.authUrl).origin;
  const connect = ["'self'", ...new Set([api, auth].filter((o) => o !== api || auth !== api))].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src ${connect}`,
    "img-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const demoRoutes: FastifyPluginAsync<{ config: Config; db: Db }> = async (app, { config, db }) => {
  const redirectUri = `${config.publicBaseUrl}/demo/callback`;
  let script: Promise<string> | undefined;
  const csp = demoCsp(config);
  const secure = (reply: FastifyReply): FastifyReply =>
    reply.header('content-security-policy', csp).header('x-frame-options', 'DENY').header('cache-control', 'no-store');

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
    script ??= bundleDemoScript().catch((e: unknown) => {
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
