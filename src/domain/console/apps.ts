/**
 * A console account's apps (docs/decisions/0015-developer-console.md, "Apps"; docs/console.md): list,
 * read (showing a secret nobody has seen yet, once), create, and edit the user client's redirect
 * URIs. Every function is scoped to the developers the account owns: another account's app is not
 * found. Framework-free.
 */
import type { Db } from '../../db/database.js';
import type { Env, OauthClientsTable } from '../../db/schema.js';
import { secretToken } from '../../lib/ids.js';
import { hashToken } from '../../lib/secrets.js';
import { insertApp, redirectUriErrors } from '../developers/create-developer.js';
import { invalidFields, invalidInput, notFound } from '../errors.js';
import type { ConsoleUser } from './accounts.js';

/** One client of an app as the console shows it. */
export interface ClientView {
  /** `machine`: the confidential machine-to-machine credential; `user`: the public user client (PKCE). */
  kind: 'machine' | 'user';
  client_id: string;
  scopes: string[];
  redirect_uris: string[];
  created_at: string;
  secret_rotated_at: string | null;
  /** Until when the previous secret still works (an overlapping rotation), or null. */
  previous_secret_expires_at: string | null;
  revoked_at: string | null;
  /** Present once only: right after creation or rotation, or at the first read of a secret nobody has seen. */
  client_secret?: string;
}

export interface AppView {
  app_id: string;
  name: string;
  developer_id: string;
  env: Env;
  created_at: string;
  clients: ClientView[];
}

interface ClientRow {
  client_id: string;
  kind: OauthClientsTable['kind'];
  scopes: string[];
  redirect_uris: string[];
  created_at: Date;
  secret_rotated_at: Date | null;
  previous_secret_expires_at: Date | null;
  revoked_at: Date | null;
  app_id: string | null;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** A client row as the console shows it, with `secret` when this answer reveals one. */
export function clientView(c: ClientRow, secret?: string): ClientView {
  return {
    kind: c.kind === 'confidential' ? 'machine' : 'user',
    client_id: c.client_id,
    scopes: c.scopes,
    redirect_uris: c.kind === 'public' ? c.redirect_uris : [],
    created_at: c.created_at.toISOString(),
    secret_rotated_at: iso(c.secret_rotated_at),
    previous_secret_expires_at: c.previous_secret_expires_at && c.previous_secret_expires_at.getTime() > Date.now() ? c.previous_secret_expires_at.toISOString() : null,
    revoked_at: iso(c.revoked_at),
    ...(secret !== undefined ? { client_secret: secret } : {}),
  };
}

/** The columns a {@link clientView} is made of. */
export const CLIENT_COLUMNS = ['client_id', 'kind', 'scopes', 'redirect_uris', 'created_at', 'secret_rotated_at', 'previous_secret_expires_at', 'revoked_at', 'app_id'] as const;

/** The account's app `appId`, or `not_found` (also for another account's app). */
export async function ownedApp(db: Db, user: ConsoleUser, appId: string): Promise<{ id: string; name: string; developer_id: string; env: Env; created_at: Date }> {
  const app = user.developerIds.length
    ? await db.selectFrom('apps').select(['id', 'name', 'developer_id', 'env', 'created_at']).where('id', '=', appId).where('developer_id', 'in', user.developerIds).executeTakeFirst()
    : undefined;
  if (!app) throw notFound(`no app ${appId}`, 'app_id');
  return app;
}

async function clientsOf(db: Db, appIds: string[]): Promise<ClientRow[]> {
  if (!appIds.length) return [];
  return db.selectFrom('oauth_clients').select([...CLIENT_COLUMNS]).where('app_id', 'in', appIds).orderBy('kind').orderBy('created_at').execute();
}

/** Every app of every developer the account owns, oldest first, with its clients (never a secret). */
export async function listApps(db: Db, user: ConsoleUser): Promise<AppView[]> {
  if (!user.developerIds.length) return [];
  const apps = await db.selectFrom('apps').select(['id', 'name', 'developer_id', 'env', 'created_at']).where('developer_id', 'in', user.developerIds).orderBy('created_at').orderBy('id').execute();
  const clients = await clientsOf(db, apps.map((a) => a.id));
  return apps.map((a) => ({
    app_id: a.id, name: a.name, developer_id: a.developer_id, env: a.env, created_at: a.created_at.toISOString(),
    clients: clients.filter((c) => c.app_id === a.id).map((c) => clientView(c)),
  }));
}

/**
 * One app with its clients. A machine credential whose secret nobody has seen (the one made at
 * sign-up or by the operator's production grant) gets a new secret now, shown in this answer only:
 * the update is conditional on the flag, so of two concurrent reads only one shows a secret.
 */
export async function getApp(db: Db, user: ConsoleUser, appId: string): Promise<AppView> {
  const app = await ownedApp(db, user, appId);
  const revealed = new Map<string, string>();
  const pending = await db.selectFrom('oauth_clients').select('client_id').where('app_id', '=', app.id).where('secret_reveal_pending', '=', true).where('revoked_at', 'is', null).execute();
  for (const { client_id } of pending) {
    const secret = secretToken();
    const won = await db
      .updateTable('oauth_clients')
      .set({ secret_hash: hashToken(secret), secret_reveal_pending: false })
      .where('client_id', '=', client_id)
      .where('secret_reveal_pending', '=', true)
      .returning('client_id')
      .executeTakeFirst();
    if (won) revealed.set(client_id, secret);
  }
  const clients = await clientsOf(db, [app.id]);
  return {
    app_id: app.id, name: app.name, developer_id: app.developer_id, env: app.env, created_at: app.created_at.toISOString(),
    clients: clients.map((c) => clientView(c, revealed.get(c.client_id))),
  };
}

/**
 * Creates an app (a machine credential and a user client) for one of the account's developers:
 * `developerId`, or the only one it owns. The machine secret is in this answer only. Redirect URIs
 * are checked as at the operator's `developer create` (https except loopback in production).
 */
export async function createApp(db: Db, user: ConsoleUser, input: { name: string; developerId?: string | undefined; redirectUris?: string[] | undefined }): Promise<AppView> {
  let developerId = input.developerId;
  if (developerId === undefined) {
    if (user.developerIds.length !== 1) {
      throw invalidInput('developer_id', user.developerIds.length ? 'name the developer account the app is for' : 'your account has no developer account yet');
    }
    developerId = user.developerIds[0]!;
  } else if (!user.developerIds.includes(developerId)) {
    throw invalidInput('developer_id', `no developer account ${developerId} of yours`);
  }
  const developer = await db.selectFrom('developers').select(['id', 'env']).where('id', '=', developerId).executeTakeFirstOrThrow();
  const redirectUris = input.redirectUris ?? [];
  const bad = redirectUriErrors(redirectUris, developer.env);
  if (bad.length) throw invalidFields(bad);
  const made = await db.transaction().execute((trx) => insertApp(trx, { env: developer.env, developerId: developer.id, name: input.name, redirectUris }));
  const view = await getApp(db, user, made.app_id);
  return { ...view, clients: view.clients.map((c) => (c.client_id === made.client_id ? { ...c, client_secret: made.client_secret } : c)) };
}

/** Replaces the redirect URIs of the app's user client (checked as at creation; an empty list stops its sign-ins). */
export async function setRedirectUris(db: Db, user: ConsoleUser, appId: string, uris: string[]): Promise<AppView> {
  const app = await ownedApp(db, user, appId);
  const bad = redirectUriErrors(uris, app.env);
  if (bad.length) throw invalidFields(bad);
  await db.updateTable('oauth_clients').set({ redirect_uris: [...new Set(uris)] }).where('app_id', '=', app.id).where('kind', '=', 'public').execute();
  return getApp(db, user, app.id);
}
