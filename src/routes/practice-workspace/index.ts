/**
 * The practice workspace at `/practice` (docs/decisions/0014-practice-workspace.md, docs/practice-guide.md):
 * a static page whose script (`app/main.ts`) signs a practice's staff in with the authorization code
 * flow and PKCE against the first-party public client of its environment (`workspaceClientId`), then calls only the
 * Practice API (`/practice/v1`). Built like `/demo`: the script is bundled with esbuild on the first
 * request and kept in memory; a strict Content-Security-Policy allows only same-origin scripts, styles
 * and API calls. Unlike `/demo` it is served in every environment.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../../config.js';
import { workspaceClientId, workspaceRedirectUri } from '../../domain/practices/workspace-client.js';
import { registerFirstPartyPage } from '../web-app/serve.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Serves the page, its script, its style sheet, its icon and the sign-in callback (the same page). */
export const practiceWorkspaceRoutes: FastifyPluginAsync<{ config: Config }> = async (app, { config }) => {
  registerFirstPartyPage(app, config, {
    path: '/practice',
    dir: here,
    values: { client_id: workspaceClientId(config.appEnv), auth_url: config.authUrl, redirect_uri: workspaceRedirectUri(config.publicBaseUrl) },
    faviconSvg: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#17603a"/><path d="M4 5h8v1H4zm0 3h8v1H4zm0 3h5v1H4z" fill="#fff"/></svg>',
  });
};
