/**
 * What the service's browser pages share on the server side (`/demo`, `/practice`, `/console`):
 * each is a static page whose script is bundled with esbuild on the first request and kept in
 * memory, served with a strict Content-Security-Policy (`pageCsp`) and not cached.
 */
import type { FastifyReply } from 'fastify';
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
