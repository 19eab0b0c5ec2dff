/**
 * Production requests (docs/decisions/0015-developer-console.md, "Sandbox first"; docs/api/admin.md,
 * "Production requests"): a console account asks for production access once its sandbox developer
 * exists; the operator lists the requests and grants (production-grant.ts) or refuses one; a refused
 * account may ask again. Framework-free.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { prefixedId } from '../../lib/ids.js';
import { conflict, invalidInput, notFound } from '../errors.js';
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
  /** Why the operator refused it; null otherwise. */
  refusal_reason: string | null;
  /** Where the account signs in to its production console, when production runs on its own database; null otherwise. */
  production_console_url: string | null;
}

const requestColumns = [
  'r.id', 'r.user_id', 'u.email', 'r.sandbox_developer_id', 'r.company', 'r.use_case', 'r.status', 'r.created_at', 'r.decided_at',
  'r.production_developer_id', 'r.refusal_reason', 'r.production_console_url',
] as const;

type RequestRow = Omit<ProductionRequestView, 'created_at' | 'decided_at'> & { created_at: Date; decided_at: Date | null };

function view(r: RequestRow): ProductionRequestView {
  return { ...r, created_at: r.created_at.toISOString(), decided_at: r.decided_at ? r.decided_at.toISOString() : null };
}

/** The request `id` as the operator and the account see it. */
export async function readProductionRequest(db: Db, id: string): Promise<ProductionRequestView> {
  return view(await db.selectFrom('production_requests as r').innerJoin('users as u', 'u.id', 'r.user_id').select([...requestColumns]).where('r.id', '=', id).executeTakeFirstOrThrow());
}

/**
 * Locks the pending request `requestId` of `env` for the rest of the transaction `trx`. Throws
 * `not_found` (naming `request_id`) for an unknown request, `conflict` for one already decided.
 */
export async function lockPendingRequest(trx: Db, env: Env, requestId: string) {
  const req = await trx.selectFrom('production_requests').selectAll().where('id', '=', requestId).where('env', '=', env).forUpdate().executeTakeFirst();
  if (!req) throw notFound(`no production request ${requestId}`, 'request_id');
  if (req.status !== 'pending') throw conflict(`the production request is already ${req.status}`, 'request_id');
  return req;
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
    // The index predicate as a literal: with a parameter, PostgreSQL's generic plan of the prepared
    // statement (from its sixth run) cannot match the partial unique index and fails with 42P10.
    .onConflict((oc) => oc.column('user_id').where('status', '=', sql.lit('pending')).doNothing())
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
 * Refuses a pending request with the operator's `reason`, which the account reads in its console
 * (docs/api/admin.md#production-requests). The account may then ask again. Throws as
 * `lockPendingRequest`, and `invalid` naming `reason` when it is blank or over 1,000 characters.
 */
export async function refuseProduction(db: Db, env: Env, requestId: string, reason: string): Promise<ProductionRequestView> {
  const text = reason.trim();
  if (!text || text.length > 1000) throw invalidInput('reason', 'must be 1 to 1000 characters, not only spaces');
  return db.transaction().execute(async (trx) => {
    const req = await lockPendingRequest(trx, env, requestId);
    await trx.updateTable('production_requests').set({ status: 'refused', decided_at: new Date(), refusal_reason: text }).where('id', '=', req.id).execute();
    return readProductionRequest(trx, req.id);
  });
}
