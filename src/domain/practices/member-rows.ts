/**
 * The rows of a staff login (docs/decisions/0014-practice-workspace.md, "Accounts"): the practice it
 * needs and the `users` + `practice_members` rows, shared by members.ts and invitations.ts.
 */
import type { Db } from '../../db/database.js';
import type { Env, PracticeRole } from '../../db/schema.js';
import { prefixedId } from '../../lib/ids.js';
import { hashPassword } from '../../lib/secrets.js';
import { invalidFields, invalidInput, notFound } from '../errors.js';
import { newUserErrors } from '../users/create-user.js';

/** PostgreSQL's unique violation: two creations of one e-mail address at once. */
const UNIQUE_VIOLATION = '23505';

/** Throws `notFound` (field `practice_id`) unless the directory has practice `practiceId` in `env`. */
export async function requirePractice(db: Db, env: Env, practiceId: string): Promise<{ id: string; name: string }> {
  const practice = await db.selectFrom('practices').select(['id', 'name']).where('env', '=', env).where('id', '=', practiceId).executeTakeFirst();
  if (!practice) throw notFound(`no practice ${practiceId} in the directory`, 'practice_id');
  return practice;
}

/**
 * Creates a staff login and its membership in one transaction (`trx` may be the caller's): the
 * e-mail address must be well-formed and unused in `env` (any role), the password at least 8
 * characters. The practice is not checked here (see {@link createPracticeAdmin}).
 */
export async function insertMember(
  trx: Db,
  env: Env,
  input: { practiceId: string; email: string; password: string; role: PracticeRole; createdByUserId?: string | null },
): Promise<{ userId: string; email: string }> {
  const email = input.email.trim();
  const errors = await newUserErrors(trx, env, { email, password: input.password });
  if (errors.length) throw invalidFields(errors);
  const userId = prefixedId('us');
  const passwordHash = await hashPassword(input.password);
  try {
    await trx.insertInto('users').values({ id: userId, env, email, password_hash: passwordHash, role: 'staff', provider_id: null }).execute();
  } catch (e) {
    if ((e as { code?: string }).code === UNIQUE_VIOLATION) throw invalidInput('email', 'a user with this e-mail already exists');
    throw e;
  }
  await trx
    .insertInto('practice_members')
    .values({ env, practice_id: input.practiceId, user_id: userId, role: input.role, created_by_user_id: input.createdByUserId ?? null })
    .execute();
  return { userId, email };
}

