/**
 * Onboards a developer (docs/api/admin.md#developers `developer create`): one machine-to-machine credential with
 * every client-credentials scope, and one public user client (authorization code + PKCE) with the
 * given redirect URIs. The client secret is returned once and stored only as a hash.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { prefixedId, secretToken } from '../../lib/ids.js';
import { hashToken } from '../../lib/secrets.js';
import { AUTHORIZATION_CODE_SCOPES, CLIENT_CREDENTIALS_SCOPES } from '../credentials/scopes.js';
import { SANDBOX_FIXTURE_IDS } from '../directory/sandbox-fixtures.js';

export interface NewDeveloper {
  developer_id: string;
  client_id: string;
  client_secret: string;
  user_client_id: string;
}

export class InvalidRedirectUri extends Error {}

/** Whether a URL's host is a loopback address or `localhost` (RFC 8252 §7.3: native apps' loopback redirects). */
function isLoopbackHost(u: URL): boolean {
  const h = u.hostname.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * Why a redirect URI is not acceptable in `env`, or undefined: absolute http(s) URLs without
 * fragments (RFC 6749 §3.1.2); in production `https`, or `http` only to a loopback address
 * (RFC 9700 §2.1, RFC 8252 §7.3). The sandbox also takes `http`, for local development.
 */
export function redirectUriProblem(uri: string, env: Env): string | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return `not an absolute URL: ${uri}`;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return `must be http or https: ${uri}`;
  if (u.hash) return `must not contain a fragment: ${uri}`;
  if (env === 'production' && u.protocol === 'http:' && !isLoopbackHost(u)) return `must be https in production (http only to a loopback address): ${uri}`;
  return undefined;
}

/** Every bad redirect URI of a list, named `redirect_uris[i]` (any value taken; non-strings are the schema's to name). */
export function redirectUriErrors(uris: unknown, env: Env): { field: string; message: string }[] {
  if (!Array.isArray(uris)) return [];
  return (uris as unknown[]).flatMap((uri, i) => {
    const problem = typeof uri === 'string' ? redirectUriProblem(uri, env) : undefined;
    return problem ? [{ field: `redirect_uris[${i}]`, message: problem }] : [];
  });
}

/** Throws `InvalidRedirectUri` when {@link redirectUriProblem} finds one. */
export function checkRedirectUri(uri: string, env: Env): void {
  const problem = redirectUriProblem(uri, env);
  if (problem) throw new InvalidRedirectUri(problem);
}

/** Onboards a developer in one transaction of its own (see `insertDeveloper`). */
export async function createDeveloper(
  db: Db,
  input: { env: Env; name: string; redirectUris?: string[]; developerId?: string },
): Promise<NewDeveloper> {
  return db.transaction().execute((trx) => insertDeveloper(trx, input));
}

/**
 * Onboards a developer within the caller's transaction `trx`, so that other writes (the demo
 * directory of `bootstrapSandbox`) commit or roll back with it: the developer row and its first app
 * (named after it, docs/decisions/0015-developer-console.md, "Apps"). Redirect URIs per RFC 6749 §3.1.2.
 */
export async function insertDeveloper(
  trx: Db,
  input: { env: Env; name: string; redirectUris?: string[]; developerId?: string },
): Promise<NewDeveloper> {
  return (await insertDeveloperWithApp(trx, input)).developer;
}

/** {@link insertDeveloper}, also answering the id of the developer's first app. */
export async function insertDeveloperWithApp(
  trx: Db,
  input: { env: Env; name: string; redirectUris?: string[]; developerId?: string },
): Promise<{ developer: NewDeveloper; appId: string }> {
  const redirectUris = input.redirectUris ?? [];
  for (const uri of redirectUris) checkRedirectUri(uri, input.env);
  const developerId = input.developerId ?? prefixedId('dv');
  await trx.insertInto('developers').values({ id: developerId, env: input.env, name: input.name }).execute();
  const app = await insertApp(trx, { env: input.env, developerId, name: input.name, redirectUris });
  if (input.env === 'sandbox') {
    // The sandbox fixtures belong to every sandbox developer's directory (docs/api/sandbox.md#fixture-provider-locations).
    await trx
      .insertInto('developer_provider_locations')
      .columns(['env', 'developer_id', 'provider_location_id'])
      .expression((eb) =>
        eb
          .selectFrom('provider_locations')
          .where('env', '=', 'sandbox')
          .where('id', 'in', SANDBOX_FIXTURE_IDS)
          .select([eb.val('sandbox').as('env'), eb.val(developerId).as('developer_id'), 'id']),
      )
      .execute();
  }
  return {
    developer: { developer_id: developerId, client_id: app.client_id, client_secret: app.client_secret, user_client_id: app.user_client_id },
    appId: app.app_id,
  };
}

export interface NewApp {
  app_id: string;
  client_id: string;
  client_secret: string;
  user_client_id: string;
}

/**
 * Adds an app to a developer within `trx` (docs/decisions/0015-developer-console.md, "Apps"): a
 * machine-to-machine credential with every client-credentials scope (its secret returned once,
 * stored as a hash only) and a public user client (authorization code + PKCE) with `redirectUris`
 * (checked by the caller).
 */
export async function insertApp(trx: Db, input: { env: Env; developerId: string; name: string; redirectUris: string[] }): Promise<NewApp> {
  const appId = prefixedId('ap');
  const clientId = prefixedId('cl', 16);
  const userClientId = prefixedId('uc', 16);
  const clientSecret = secretToken();
  await trx.insertInto('apps').values({ id: appId, env: input.env, developer_id: input.developerId, name: input.name }).execute();
  await trx
    .insertInto('oauth_clients')
    .values([
      {
        client_id: clientId,
        env: input.env,
        developer_id: input.developerId,
        app_id: appId,
        kind: 'confidential',
        secret_hash: hashToken(clientSecret),
        scopes: [...CLIENT_CREDENTIALS_SCOPES],
      },
      {
        client_id: userClientId,
        env: input.env,
        developer_id: input.developerId,
        app_id: appId,
        kind: 'public',
        secret_hash: null,
        scopes: [...AUTHORIZATION_CODE_SCOPES],
        redirect_uris: input.redirectUris,
      },
    ])
    .execute();
  return { app_id: appId, client_id: clientId, client_secret: clientSecret, user_client_id: userClientId };
}
