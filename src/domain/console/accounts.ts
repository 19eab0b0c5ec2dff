/**
 * Console accounts (docs/decisions/0015-developer-console.md, "Accounts", "Sandbox first"): a
 * `users` row with role `developer`, the developer accounts it owns (`developer_members`), and the
 * sandbox sign-up that creates the account together with its sandbox developer and that developer's
 * own directory copy. Framework-free.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { insertDeveloperWithApp } from '../developers/create-developer.js';
import { createUser } from '../users/create-user.js';
import { writeDirectoryCopy } from './sandbox-directory.js';

/** The caller of a Console API route (set by the console guard from a console token). */
export interface ConsoleUser {
  env: Env;
  userId: string;
  email: string;
  /** Every developer account the user owns, of either environment, oldest first. */
  developerIds: string[];
}

export interface NewConsoleAccount {
  userId: string;
  email: string;
  /** The sandbox developer created with the account (sandbox only). */
  developerId: string | null;
  appId: string | null;
}

/**
 * Creates a console account in one transaction: the `developer` login and, in the sandbox, a
 * sandbox developer it owns (named after the address) with one app whose machine secret nobody has
 * seen (`secret_reveal_pending`: the first console read of the app replaces and shows it, so no
 * secret is kept anywhere) and its own directory copy. Throws `EmailTaken` / `UserInputError` as
 * `createUser` does.
 */
export async function createConsoleAccount(db: Db, input: { env: Env; email: string; password: string }): Promise<NewConsoleAccount> {
  return db.transaction().execute(async (trx) => {
    const user = await createUser(trx, { env: input.env, email: input.email, password: input.password, role: 'developer' });
    if (input.env !== 'sandbox') return { userId: user.user_id, email: user.email, developerId: null, appId: null };
    const { developer, appId } = await insertDeveloperWithApp(trx, { env: 'sandbox', name: user.email });
    await trx.updateTable('oauth_clients').set({ secret_reveal_pending: true }).where('client_id', '=', developer.client_id).execute();
    await trx.insertInto('developer_members').values({ user_id: user.user_id, developer_id: developer.developer_id, role: 'owner' }).execute();
    await writeDirectoryCopy(trx, developer.developer_id);
    return { userId: user.user_id, email: user.email, developerId: developer.developer_id, appId };
  });
}

/** The console user `userId` of `env` as of now (email and owned developers), or undefined when the account is gone or not a console account. */
export async function readConsoleUser(db: Db, env: Env, userId: string): Promise<ConsoleUser | undefined> {
  const rows = await db
    .selectFrom('users as u')
    .leftJoin('developer_members as m', 'm.user_id', 'u.id')
    .select(['u.email', 'm.developer_id', 'm.created_at'])
    .where('u.id', '=', userId)
    .where('u.env', '=', env)
    .where('u.role', '=', 'developer')
    .orderBy('m.created_at')
    .execute();
  if (!rows.length) return undefined;
  return { env, userId, email: rows[0]!.email, developerIds: rows.flatMap((r) => (r.developer_id ? [r.developer_id] : [])) };
}
