/**
 * The developer console's own OAuth client (docs/decisions/0015-developer-console.md, "Accounts";
 * docs/auth.md, "Console accounts and sign-in"): a first-party public client (authorization code +
 * PKCE, no consent screen) owned by a system developer row of its environment, created or refreshed
 * at every start like the practice workspace's (src/domain/practices/workspace-client.ts).
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';

/** The one scope of a console token (the Console API checks the role and the client, not scopes). */
export const CONSOLE_SCOPE = 'console';

/** The scopes the console client may ask for. */
export const CONSOLE_CLIENT_SCOPES: readonly string[] = [CONSOLE_SCOPE, 'offline_access'];

/** The name the sign-in page shows for the console. */
export const CONSOLE_APP_NAME = 'Carebook developer console';

/** The console's client id: `developer-console` in production, `developer-console-sandbox` in the sandbox. */
export function consoleClientId(env: Env): string {
  return env === 'production' ? 'developer-console' : `developer-console-${env}`;
}

/** The system developer row that owns the console client (never a real developer). */
export function consoleDeveloperId(env: Env): string {
  return `dv_system_console_${env}`;
}

/** The console's redirect URI. */
export function consoleRedirectUri(publicBaseUrl: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/console/callback`;
}

/**
 * Creates the console client of `env` and its system developer, or brings its redirect URI and
 * scopes up to date. Idempotent and safe when several processes start at once (upserts).
 */
export async function ensureConsoleClient(db: Db, env: Env, publicBaseUrl: string): Promise<void> {
  const developerId = consoleDeveloperId(env);
  const redirectUris = [consoleRedirectUri(publicBaseUrl)];
  const scopes = [...CONSOLE_CLIENT_SCOPES];
  await db
    .insertInto('developers')
    .values({ id: developerId, env, name: CONSOLE_APP_NAME })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  await db
    .insertInto('oauth_clients')
    .values({ client_id: consoleClientId(env), env, developer_id: developerId, kind: 'public', secret_hash: null, scopes, redirect_uris: redirectUris })
    .onConflict((oc) => oc.column('client_id').doUpdateSet({ redirect_uris: redirectUris, scopes }))
    .execute();
}
