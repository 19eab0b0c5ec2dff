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
 * directory of `bootstrapSandbox`) commit or roll back with it. Redirect URIs per RFC 6749 §3.1.2.
 */
export async function insertDeveloper(
  trx: Db,
  input: { env: Env; name: string; redirectUris?: string[]; developerId?: string },
): Promise<NewDeveloper> {
  const redirectUris = input.redirectUris ?? [];
  for (const uri of redirectUris) checkRedirectUri(uri, input.env);
  const developerId = input.developerId ?? prefixedId('dv');
  const clientId = prefixedId('cl', 16);
  const userClientId = prefixedId('uc', 16);
  const clientSecret = secretToken();
  await trx.insertInto('developers').values({ id: developerId, env: input.env, name: input.name }).execute();
  await trx
    .insertInto('oauth_clients')
    .values([
      {
        client_id: clientId,
        env: input.env,
        developer_id: developerId,
        kind: 'confidential',
        secret_hash: hashToken(clientSecret),
        scopes: [...CLIENT_CREDENTIALS_SCOPES],
      },
      {
        client_id: userClientId,
        env: input.env,
        developer_id: developerId,
        kind: 'public',
        secret_hash: null,
        scopes: [...AUTHORIZATION_CODE_SCOPES],
        redirect_uris: redirectUris,
      },
    ])
    .execute();
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
  return { developer_id: developerId, client_id: clientId, client_secret: clientSecret, user_client_id: userClientId };
}
