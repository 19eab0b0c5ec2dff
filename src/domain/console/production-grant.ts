/**
 * Granting production access (docs/decisions/0015-developer-console.md, "Production in its own
 * database"; docs/api/admin.md#production-requests): the grant creates the production developer,
 * owned by the requesting account, with one app whose machine secret nobody has seen (the account's
 * first read of the app in the console replaces and shows it).
 *
 * Where it is written: into this database (environment `production`) when the production deployment
 * shares it, or, given a `ProductionTarget`, into the production deployment's own database, where the
 * account gets a console login of its own (the same e-mail address and password hash, so the same
 * password signs in) and finds its production app. Framework-free.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { prefixedId } from '../../lib/ids.js';
import { insertDeveloperWithApp } from '../developers/create-developer.js';
import { conflict, DomainError, unavailable } from '../errors.js';
import { lockPendingRequest, readProductionRequest, type ProductionRequestView } from './production.js';

/** The production deployment's own database, and its console's address to show the account. */
export interface ProductionTarget {
  db: Db;
  /** `{production PUBLIC_BASE_URL}/console`, or undefined when not configured. */
  consoleUrl: string | undefined;
}

/**
 * The production developer's id for request `requestId`: fixed by the request, so that a grant
 * repeated after a failure between the two databases' commits finds what the first one wrote.
 */
export function productionDeveloperId(requestId: string): string {
  return `dv_${requestId.replace(/^prq_/, '')}`;
}

/**
 * Grants the pending request `requestId` of `env` (see the module comment). Throws `not_found` for
 * an unknown request, `conflict` for one already decided, or, with a target, when the address has a
 * login of another kind in production.
 */
export async function grantProduction(db: Db, env: Env, requestId: string, target?: ProductionTarget): Promise<ProductionRequestView & { app_id: string }> {
  return db.transaction().execute(async (trx) => {
    const req = await lockPendingRequest(trx, env, requestId);
    const developerId = productionDeveloperId(req.id);
    let appId: string;
    if (!target) {
      appId = await createProductionDeveloper(trx, { ownerId: req.user_id, company: req.company, developerId });
    } else {
      const account = await trx.selectFrom('users').select(['id', 'email', 'password_hash']).where('id', '=', req.user_id).executeTakeFirstOrThrow();
      // Written and committed there first, under this request's lock here; repeated safely (see productionDeveloperId).
      appId = await target.db
        .transaction()
        .execute(async (ptrx) => {
          const ownerId = await productionLogin(ptrx, account);
          const existing = await ptrx.selectFrom('apps').select('id').where('developer_id', '=', developerId).orderBy('created_at').executeTakeFirst();
          return existing?.id ?? createProductionDeveloper(ptrx, { ownerId, company: req.company, developerId });
        })
        .catch((e: unknown) => {
          if (e instanceof DomainError) throw e;
          // Unreachable, not migrated, refused: the request stays pending; the operator fixes the target and grants again.
          const code = (e as { code?: unknown }).code;
          throw unavailable(`the production database could not be written${typeof code === 'string' ? ` (${code})` : ''}; the request is still pending`, 60);
        });
    }
    await trx
      .updateTable('production_requests')
      .set({ status: 'granted', decided_at: new Date(), production_developer_id: developerId, production_console_url: target ? (target.consoleUrl ?? null) : null })
      .where('id', '=', req.id)
      .execute();
    return { ...(await readProductionRequest(trx, req.id)), app_id: appId };
  });
}

/** Creates the production developer `developerId` with one app, owned by `ownerId`; its machine secret is revealed on first read. */
async function createProductionDeveloper(trx: Db, input: { ownerId: string; company: string; developerId: string }): Promise<string> {
  const { developer, appId } = await insertDeveloperWithApp(trx, { env: 'production', name: input.company, developerId: input.developerId });
  await trx.updateTable('oauth_clients').set({ secret_reveal_pending: true }).where('client_id', '=', developer.client_id).execute();
  await trx.insertInto('developer_members').values({ user_id: input.ownerId, developer_id: developer.developer_id, role: 'owner' }).execute();
  return appId;
}

/**
 * The account's console login in the production database: the one it has (it may have signed up
 * there), else a new one with the sandbox login's id, address and password hash.
 */
async function productionLogin(ptrx: Db, account: { id: string; email: string; password_hash: string }): Promise<string> {
  const found = await ptrx
    .selectFrom('users')
    .select(['id', 'role'])
    .where('env', '=', 'production')
    .where((eb) => eb(eb.fn('lower', ['email']), '=', account.email.toLowerCase()))
    .executeTakeFirst();
  if (found) {
    if (found.role !== 'developer') throw conflict(`${account.email} has a production login that is not a console account`, 'request_id');
    return found.id;
  }
  const idTaken = await ptrx.selectFrom('users').select('id').where('id', '=', account.id).executeTakeFirst();
  const id = idTaken ? prefixedId('us') : account.id;
  await ptrx.insertInto('users').values({ id, env: 'production', email: account.email, password_hash: account.password_hash, role: 'developer', provider_id: null }).execute();
  return id;
}
