/**
 * Production access (docs/decisions/0015-developer-console.md, "Sandbox first"; docs/api/admin.md,
 * "Production requests"): a console account asks for it once its sandbox developer exists; the
 * operator lists the requests and grants one, which creates the production developer owned by the
 * same account, with one app whose machine secret nobody has seen (the account's first read of the
 * app in the console shows it). Framework-free.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { prefixedId } from '../../lib/ids.js';
import { insertDeveloperWithApp } from '../developers/create-developer.js';
import { conflict, notFound } from '../errors.js';
import type { ConsoleUser } from './accounts.js';

export type ProductionStatus = 'none' | 'pending' | 'granted' | 'refused';

export interface ProductionRequestView {
  id: string;
  user_id: string;
  email: string;
  sandbox_developer_id: string;
  company: string;
  use_case: string;
  status: 'pending' | 'granted' | 'refused';
  created_at: string;
  decided_at: string | null;
  production_developer_id: string | null;
}

const requestColumns = ['r.id', 'r.user_id', 'u.email', 'r.sandbox_developer_id', 'r.company', 'r.use_case', 'r.status', 'r.created_at', 'r.decided_at', 'r.production_developer_id'] as const;

function view(r: { id: string; user_id: string; email: string; sandbox_developer_id: string; company: string; use_case: string; status: ProductionRequestView['status']; created_at: Date; decided_at: Date | null; production_developer_id: string | null }): ProductionRequestView {
  return { ...r, created_at: r.created_at.toISOString(), decided_at: r.decided_at ? r.decided_at.toISOString() : null };
}

/** The account's latest production request, or undefined. */
export async function latestProductionRequest(db: Db, user: ConsoleUser): Promise<ProductionRequestView | undefined> {
  const row = await db.selectFrom('production_requests as r').innerJoin('users as u', 'u.id', 'r.user_id').select([...requestColumns]).where('r.user_id', '=', user.userId).orderBy('r.created_at', 'desc').limit(1).executeTakeFirst();
  return row ? view(row) : undefined;
}

/**
 * Records the account's request for production access. 409 when it has no sandbox developer, has
 * a request pending, or already has production access.
 */
export async function requestProduction(db: Db, user: ConsoleUser, input: { company: string; useCase: string }): Promise<ProductionRequestView> {
  const devs = user.developerIds.length ? await db.selectFrom('developers').select(['id', 'env']).where('id', 'in', user.developerIds).orderBy('created_at').execute() : [];
  const sandbox = devs.find((d) => d.env === 'sandbox');
  if (!sandbox) throw conflict('production access is asked for from a sandbox developer account; this account has none');
  if (devs.some((d) => d.env === 'production')) throw conflict('this account already has production access');
  const id = prefixedId('prq');
  const inserted = await db
    .insertInto('production_requests')
    .values({ id, env: user.env, user_id: user.userId, sandbox_developer_id: sandbox.id, company: input.company, use_case: input.useCase })
    .onConflict((oc) => oc.column('user_id').where('status', '=', 'pending').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) throw conflict('a production request of this account is already pending');
  return (await latestProductionRequest(db, user))!;
}

/** The production requests of `env`, oldest first; `status` filters. */
export async function listProductionRequests(db: Db, env: Env, status?: ProductionRequestView['status']): Promise<ProductionRequestView[]> {
  let q = db.selectFrom('production_requests as r').innerJoin('users as u', 'u.id', 'r.user_id').select([...requestColumns]).where('r.env', '=', env);
  if (status) q = q.where('r.status', '=', status);
  return (await q.orderBy('r.created_at').orderBy('r.id').limit(1000).execute()).map(view);
}

/**
 * Grants a pending request: creates the production developer (named after the company) owned by
 * the requesting account, with one app (no redirect URIs yet; the account adds them in the
 * console), and marks the request granted. 404 for an unknown request, 409 for one already decided.
 */
export async function grantProduction(db: Db, env: Env, requestId: string): Promise<ProductionRequestView & { app_id: string }> {
  return db.transaction().execute(async (trx) => {
    const req = await trx.selectFrom('production_requests').selectAll().where('id', '=', requestId).where('env', '=', env).forUpdate().executeTakeFirst();
    if (!req) throw notFound(`no production request ${requestId}`, 'request_id');
    if (req.status !== 'pending') throw conflict(`the production request is already ${req.status}`, 'request_id');
    const { developer, appId } = await insertDeveloperWithApp(trx, { env: 'production', name: req.company });
    await trx.updateTable('oauth_clients').set({ secret_reveal_pending: true }).where('client_id', '=', developer.client_id).execute();
    await trx.insertInto('developer_members').values({ user_id: req.user_id, developer_id: developer.developer_id, role: 'owner' }).execute();
    await trx.updateTable('production_requests').set({ status: 'granted', decided_at: new Date(), production_developer_id: developer.developer_id }).where('id', '=', req.id).execute();
    const row = await trx.selectFrom('production_requests as r').innerJoin('users as u', 'u.id', 'r.user_id').select([...requestColumns]).where('r.id', '=', req.id).executeTakeFirstOrThrow();
    return { ...view(row), app_id: appId };
  });
}
