/**
 * The sign-up form (docs/auth.md, "Sign-up", "Console accounts and sign-in"): checked, throttled per
 * address, and answered the same whether or not the e-mail address already has an account. On a
 * developer's app it creates a patient; on the developer console a console account (with, in the
 * sandbox, its sandbox developer: src/domain/console/accounts.ts). Framework-free.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { createConsoleAccount } from '../../domain/console/accounts.js';
import { createUser, EmailTaken, MIN_PASSWORD_LENGTH, UserInputError } from '../../domain/users/create-user.js';
import { hashPassword } from '../../lib/secrets.js';
import { take, type LoginLimits } from '../rate-limit.js';
import type { FieldErrors } from './pages.js';

export interface SignUpInput {
  env: Env;
  /** As typed (trimmed here). */
  email: string;
  password: string;
  passwordConfirm: string;
  /** The client address, for the per-address throttle. */
  address: string;
  /** `developer` on the developer console, `patient` elsewhere. */
  accountKind: 'patient' | 'developer';
}

export type SignUpOutcome =
  | { kind: 'invalid'; email: string; fieldErrors: FieldErrors }
  /** Too many sign-ups from the address. */
  | { kind: 'throttled'; email: string; retryAfterSeconds: number }
  /** Done: `created` is false when the address already had an account (left unchanged). */
  | { kind: 'done'; email: string; created: boolean };

/**
 * Signs up a patient or a console account. The form is checked first, then the sign-up is counted against the address,
 * then the account is created. For an address that already has an account nothing changes, and the
 * password is hashed all the same so that both take as long: the caller answers both alike.
 */
export async function signUp(deps: { db: Db; limits: LoginLimits }, input: SignUpInput): Promise<SignUpOutcome> {
  const { db, limits } = deps;
  const { env, password } = input;
  const email = input.email.trim();
  const invalid = (fieldErrors: FieldErrors): SignUpOutcome => ({ kind: 'invalid', email, fieldErrors });
  if (!email) return invalid({ email: 'Enter your e-mail address.' });
  if (password.length < MIN_PASSWORD_LENGTH) return invalid({ password: `Use at least ${MIN_PASSWORD_LENGTH} characters.` });
  if (input.passwordConfirm !== password) return invalid({ password_confirm: 'The passwords do not match.' });
  const wait = await take(db, `signup:addr:${env}:${input.address}`, limits.signupsPerAddress);
  if (wait > 0) return { kind: 'throttled', email, retryAfterSeconds: wait };
  try {
    if (input.accountKind === 'developer') await createConsoleAccount(db, { env, email, password });
    else await createUser(db, { env, email, password, role: 'patient' });
    return { kind: 'done', email, created: true };
  } catch (e) {
    if (e instanceof EmailTaken) {
      await hashPassword(password);
      return { kind: 'done', email, created: false };
    }
    if (!(e instanceof UserInputError)) throw e;
    const key: keyof FieldErrors = e.field === 'password' ? 'password' : 'email';
    return invalid({ [key]: `${key === 'email' ? 'E-mail address' : 'Password'} ${e.message}.` });
  }
}
