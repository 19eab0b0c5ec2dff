/**
 * Rotating and revoking an app's clients from the console (docs/decisions/0015-developer-console.md,
 * "Apps"; docs/console.md): a rotation with an optional overlap (the old secret keeps working for
 * the grace period, at most 24 h; both kept as hashes only), and revocation (no more tokens; the
 * client's token families revoked). Scoped to the account's apps. Framework-free.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { secretToken } from '../../lib/ids.js';
import { hashToken } from '../../lib/secrets.js';
import { conflict, notFound } from '../errors.js';
import type { ConsoleUser } from './accounts.js';
import { CLIENT_COLUMNS, clientView, ownedApp, type ClientView } from './apps.js';

/** The longest overlap a rotation may keep the old secret working for (24 hours). */
export const MAX_GRACE_PERIOD_SECONDS = 86_400;

async function ownedClient(db: Db, user: ConsoleUser, appId: string, clientId: string) {
  const app = await ownedApp(db, user, appId);
  const client = await db.selectFrom('oauth_clients').select(['client_id', 'kind', 'revoked_at']).where('client_id', '=', clientId).where('app_id', '=', app.id).executeTakeFirst();
  if (!client) throw notFound(`no client ${clientId} in app ${appId}`, 'client_id');
  return client;
}

/**
 * Gives the app's machine credential a new secret, answered once. With `graceSeconds` > 0 the
 * secret it had keeps working until then (a previous overlap still running is replaced: only the
 * secret just replaced overlaps); with 0 it stops at once. Tokens already issued run to their expiry.
 */
export async function rotateAppSecret(db: Db, user: ConsoleUser, appId: string, clientId: string, graceSeconds: number): Promise<ClientView> {
  const client = await ownedClient(db, user, appId, clientId);
  if (client.kind !== 'confidential') throw conflict('only a machine credential has a secret; a user client authenticates with PKCE', 'client_id');
  if (client.revoked_at) throw conflict('the client is revoked', 'client_id');
  const secret = secretToken();
  const keep = graceSeconds > 0;
  const row = await db
    .updateTable('oauth_clients')
    .set({
      // The right-hand side reads the row as it was: the secret being replaced.
      previous_secret_hash: keep ? sql<string>`secret_hash` : null,
      previous_secret_expires_at: keep ? new Date(Date.now() + graceSeconds * 1000) : null,
      secret_hash: hashToken(secret),
      secret_rotated_at: new Date(),
      secret_reveal_pending: false,
    })
    .where('client_id', '=', client.client_id)
    .where('revoked_at', 'is', null)
    .returning([...CLIENT_COLUMNS])
    .executeTakeFirst();
  if (!row) throw conflict('the client is revoked', 'client_id');
  return clientView(row, secret);
}

/**
 * Revokes one of the app's clients: it gets no more tokens (the token endpoint, the sign-in page and
 * anonymous tokens refuse it), and its token families are revoked, so its users' tokens and refresh
 * tokens stop at once. Machine access tokens already issued run to their expiry (at most 60 minutes).
 * Revoking a revoked client changes nothing. Answers the client as it is now.
 */
export async function revokeAppClient(db: Db, user: ConsoleUser, appId: string, clientId: string): Promise<ClientView> {
  const client = await ownedClient(db, user, appId, clientId);
  await db.transaction().execute(async (trx) => {
    const now = new Date();
    await trx.updateTable('oauth_clients').set({ revoked_at: now, previous_secret_hash: null, previous_secret_expires_at: null }).where('client_id', '=', client.client_id).where('revoked_at', 'is', null).execute();
    await trx.updateTable('token_families').set({ revoked_at: now }).where('client_id', '=', client.client_id).where('revoked_at', 'is', null).execute();
  });
  const row = await db.selectFrom('oauth_clients').select([...CLIENT_COLUMNS]).where('client_id', '=', client.client_id).executeTakeFirstOrThrow();
  return clientView(row);
}
