/**
 * The developer console at `/console` (docs/decisions/0015-developer-console.md, "One API, one page";
 * docs/console.md, "The console pages"): a static page whose script (`app/main.ts`) signs a developer
 * up or in with the authorization code flow and PKCE against the console's first-party public client
 * (`consoleClientId`), then calls only the Console API (`/console/v1`). Built like `/demo` and
 * `/practice`: the script is bundled with esbuild on the first request and kept in memory; a strict
 * Content-Security-Policy allows only same-origin scripts, styles and API calls. Served in every
 * environment.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../../config.js';
import { consoleClientId, consoleRedirectUri } from '../../domain/console/console-client.js';
import { registerFirstPartyPage } from '../web-app/serve.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Serves the page, its script, its style sheet, its icon and the sign-in callback (the same page). */
export const consolePageRoutes: FastifyPluginAsync<{ config: Config }> = async (app, { config }) => {
  registerFirstPartyPage(app, config, {
    path: '/console',
    dir: here,
    values: { client_id: consoleClientId(config.appEnv), auth_url: config.authUrl, redirect_uri: consoleRedirectUri(config.publicBaseUrl), env: config.appEnv },
    faviconSvg: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#3b2f86"/><path d="M4 5l3 3-3 3M8 11h4" stroke="#fff" stroke-width="1.6" fill="none"/></svg>',
  });
};
