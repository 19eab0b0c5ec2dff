/**
 * What the service's browser pages share on the server side (`/demo`, `/practice`, `/console`):
 * each is a static page whose script is bundled with esbuild on the first request and kept in
 * memory, served with a strict Content-Security-Policy (`pageCsp`) and not cached.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../../config.js';

/** Bundles a page's browser script (`entry`, a TypeScript file) with esbuild's JS API; no files are written. */
export async function bundleScript(entry: string): Promise<string> {
  const esbuild = await import('esbuild');
  const out = await esbuild.build({ entryPoints: [entry], bundle: true, write: false, format: 'esm', target: 'es2022', minify: true, legalComments: 'none' });
  return out.outputFiles[0]!.text;
}

/** Escapes a value for a double-quoted HTML attribute. */
export const escapeAttr = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** A page's Content-Security-Policy: nothing but this origin (and the auth server's, for tokens). */
export function pageCsp(config: Config): string {
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

/** Sets a page's security and caching headers: the CSP, no framing, no sniffing, no referrer, no caching. */
export function securePage(reply: FastifyReply, csp: string): FastifyReply {
  return reply
    .header('content-security-policy', csp)
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store');
}

/** What a first-party page is: where it is served, its folder (`app/index.html`, `app/main.ts`, `app/app.css`), its placeholders and icon. */
export interface FirstPartyPage {
  /** The page's path, e.g. `/practice`; its callback is `${path}/callback`. */
  path: string;
  /** The folder holding `app/`. */
  dir: string;
  /** `{{name}}` placeholders of `index.html` and their values (escaped here). */
  values: Record<string, string>;
  /** The page's icon (SVG text). */
  faviconSvg: string;
}

/**
 * Registers a first-party page (the practice workspace, the developer console): the page and its
 * sign-in callback (the same HTML), the script bundled on the first request, the style sheet and the
 * icon, all with the page's CSP and no caching, and hidden from the OpenAPI document.
 */
export function registerFirstPartyPage(app: FastifyInstance, config: Config, page: FirstPartyPage): void {
  const csp = pageCsp(config);
  const secure = (reply: FastifyReply): FastifyReply => securePage(reply, csp);
  let script: Promise<string> | undefined;
  let html: Promise<string> | undefined;
  const hide = { schema: { hide: true } };
  const sendPage = async (reply: FastifyReply) => {
    html ??= readFile(join(page.dir, 'app/index.html'), 'utf8').then((text) =>
      Object.entries(page.values).reduce((t, [name, value]) => t.replaceAll(`{{${name}}}`, escapeAttr(value)), text),
    );
    return secure(reply).type('text/html; charset=utf-8').send(await html);
  };
  app.get(page.path, hide, (_req, reply) => sendPage(reply));
  app.get(`${page.path}/`, hide, (_req, reply) => reply.redirect(page.path));
  app.get(`${page.path}/callback`, hide, (_req, reply) => sendPage(reply));
  app.get(`${page.path}/app.js`, hide, async (_req, reply) => {
    script ??= bundleScript(join(page.dir, 'app/main.ts')).catch((e: unknown) => {
      script = undefined;
      throw e;
    });
    return secure(reply).type('text/javascript; charset=utf-8').send(await script);
  });
  app.get(`${page.path}/app.css`, hide, async (_req, reply) => secure(reply).type('text/css; charset=utf-8').send(await readFile(join(page.dir, 'app/app.css'), 'utf8')));
  app.get(`${page.path}/favicon.svg`, hide, async (_req, reply) => secure(reply).type('image/svg+xml').send(page.faviconSvg));
}
