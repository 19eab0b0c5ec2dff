/**
 * The sign-in form: e-mail address and password, throttled per account and per address (docs/auth.md,
 * "Throttles"), then a login session. Framework-free.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { secretToken } from '../../lib/ids.js';
import { hashPassword, hashToken, verifyPassword } from '../../lib/secrets.js';
import { clear, refund, take, type LoginLimits } from '../rate-limit.js';
import { accountMayUseClient } from './first-party.js';
import { startLoginSession } from './login-sessions.js';
import type { FieldErrors } from './pages.js';

export interface SignInInput {
  env: Env;
  /** As typed (trimmed here). */
  email: string;
  password: string;
  /** The client address, for the per-address throttle. */
  address: string;
  /** The anonymous subject of the authorization request, kept by the session. */
  anonymousSubject: string | null;
  /** The client asking (the practice workspace takes staff and provider users only, a developer's app no staff: first-party.ts). */
  clientId: string;
}

export type SignInOutcome =
  /** A field left empty. */
  | { kind: 'incomplete'; email: string; fieldErrors: FieldErrors }
  /** Too many failures for the account or the address. */
  | { kind: 'throttled'; email: string; retryAfterSeconds: number }
  /** Unknown address or wrong password (which one is not told). */
  | { kind: 'refused'; email: string }
  /** The right password, but an account that may not sign in through this client (first-party.ts). */
  | { kind: 'wrong-account'; email: string }
  /** The right password of a practice staff login whose membership was removed (docs/decisions/0014-practice-workspace.md, "Accounts and sign-in as built"). */
  | { kind: 'not-a-member'; email: string }
  | { kind: 'signed-in'; sessionId: string; userId: string };

/**
 * The sign-in of one auth server: `signIn(input)` counts the attempt against the account and the
 * address first, then checks the password, so that under any concurrency at most `max` attempts per
 * window reach the check; a success clears the account's count and gives the address its attempt back.
 */
export function createSignIn(deps: { db: Db; limits: LoginLimits }): (input: SignInInput) => Promise<SignInOutcome> {
  const { db, limits } = deps;
  // Unknown e-mail addresses cost the same argon2id verification as known ones.
  let dummyHash: Promise<string> | undefined;
  const dummy = (): Promise<string> => (dummyHash ??= hashPassword(secretToken()));

  return async (input) => {
    const { env, password } = input;
    const email = input.email.trim();
    const fieldErrors: FieldErrors = {};
    if (!email) fieldErrors.email = 'Enter your e-mail address.';
    if (!password) fieldErrors.password = 'Enter your password.';
    if (fieldErrors.email || fieldErrors.password) return { kind: 'incomplete', email, fieldErrors };
    const accountBucket = `signin:acct:${env}:${hashToken(email.toLowerCase())}`;
    const addressBucket = `signin:addr:${env}:${input.address}`;
    const wait = Math.max(
      await take(db, accountBucket, limits.failuresPerAccount),
      await take(db, addressBucket, limits.failuresPerAddress),
    );
    if (wait > 0) return { kind: 'throttled', email, retryAfterSeconds: wait };
    const user = await db
      .selectFrom('users')
      .select(['id', 'password_hash', 'role'])
      .where('env', '=', env)
      .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
      .executeTakeFirst();
    const ok = await verifyPassword(user?.password_hash ?? (await dummy()), password);
    if (!user || !ok) return { kind: 'refused', email };
    // A success is not held against the account or the address: only failures stay counted.
    await clear(db, accountBucket);
    await refund(db, addressBucket);
    // Told only after the password proved who is asking; no session is started for the wrong client.
    if (!accountMayUseClient(env, input.clientId, user.role)) return { kind: 'wrong-account', email };
    // A removed member's login stays (audit rows name it) but opens nothing: the Practice API would
    // refuse its token, so the sign-in says so instead of handing the workspace a token that fails.
    if (user.role === 'staff') {
      const member = await db.selectFrom('practice_members').select('user_id').where('env', '=', env).where('user_id', '=', user.id).executeTakeFirst();
      if (!member) return { kind: 'not-a-member', email };
    }
    return { kind: 'signed-in', userId: user.id, sessionId: await startLoginSession(db, env, user.id, input.anonymousSubject) };
  };
}
