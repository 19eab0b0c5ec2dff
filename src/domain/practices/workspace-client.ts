/**
 * The practice workspace's own OAuth client (docs/decisions/0014-practice-workspace.md, "Sign-in";
 * docs/auth.md, "Practice accounts and sign-in"): a first-party public client (authorization code +
 * PKCE, no consent screen) owned by a system developer row of its environment, created or refreshed
 * at every start (its redirect URI follows `PUBLIC_BASE_URL`). Client and developer ids are global
 * keys, so each environment has its own.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { PRACTICE_SCOPES } from './staff-principal.js';

/** The scopes the workspace client may ask for. */
export const WORKSPACE_CLIENT_SCOPES: readonly string[] = [...PRACTICE_SCOPES, 'offline_access'];

/** The name the sign-in page shows for the workspace. */
export const WORKSPACE_APP_NAME = 'Carebook practice workspace';

/** The workspace's client id: `practice-workspace` in production, `practice-workspace-sandbox` in the sandbox. */
export function workspaceClientId(env: Env): string {
  return env === 'production' ? 'practice-workspace' : `practice-workspace-${env}`;
}

/** The system developer row that owns the workspace client (never a real developer: no directory, no credentials). */
export function workspaceDeveloperId(env: Env): string {
  return `dv_system_workspace_${env}`;
}

/** Whether a developer id is a system developer (excluded from the sandbox fixtures and the demo's first-start check). */
export function isSystemDeveloperId(id: string): boolean {
  return id.startsWith('dv_system_');
}

/** The workspace's redirect URI (docs/auth.md, "Practice accounts and sign-in"). */
export function workspaceRedirectUri(publicBaseUrl: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/practice/callback`;
}

/**
 * Creates the workspace client of `env` and its system developer, or brings its redirect URI and
 * scopes up to date. Idempotent and safe when several processes start at once (upserts).
 */
export async function ensureWorkspaceClient(db: Db, env: Env, publicBaseUrl: string): Promise<void> {
  const developerId = workspaceDeveloperId(env);
  const redirectUris = [workspaceRedirectUri(publicBaseUrl)];
  const scopes = [...WORKSPACE_CLIENT_SCOPES];
  await db
    .insertInto('developers')
    .values({ id: developerId, env, name: WORKSPACE_APP_NAME })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  await db
    .insertInto('oauth_clients')
    .values({ client_id: workspaceClientId(env), env, developer_id: developerId, kind: 'public', secret_hash: null, scopes, redirect_uris: redirectUris })
    .onConflict((oc) => oc.column('client_id').doUpdateSet({ redirect_uris: redirectUris, scopes }))
    .execute();
}
