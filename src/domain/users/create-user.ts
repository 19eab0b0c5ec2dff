/** Creates a login for the authorization code flow (docs/api/admin.md#users `user create`). */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { prefixedId } from '../../lib/ids.js';
import { hashPassword } from '../../lib/secrets.js';

/** A refused new user: `field` and `message` name the first problem, `errors` all of them. */
export class UserInputError extends Error {
  readonly errors: { field: string; message: string }[];
  constructor(readonly field: string, message: string, errors?: { field: string; message: string }[]) {
    super(message);
    this.errors = errors ?? [{ field, message }];
  }
}

/**
 * A refused new user whose only problem is an e-mail address that already has an account (the
 * sign-up page answers it exactly as a new account, so as not to tell which addresses have one).
 */
export class EmailTaken extends UserInputError {}

export interface NewUser {
  user_id: string;
  email: string;
  role: 'patient' | 'provider' | 'developer';
  provider_id: string | null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Minimum password length per NIST SP 800-63B §5.1.1.2. */
export const MIN_PASSWORD_LENGTH = 8;

type NewUserInput = { email?: unknown; password?: unknown; role?: unknown; provider_id?: unknown };

/**
 * Every problem of a new user at once (docs/api/errors.md, "Validation"): the e-mail's form, the
 * password's length (NIST SP 800-63B §5.1.1.2), the provider id a provider needs (and that exists),
 * and an e-mail already taken. Takes any value per field (one of the wrong type is skipped: a schema
 * names it), so it also serves a request body the schema refused.
 */
export async function newUserErrors(db: Db, env: Env, input: NewUserInput): Promise<{ field: string; message: string }[]> {
  return (await newUserProblems(db, env, input)).errors;
}

/** {@link newUserErrors}, and whether the e-mail address already has an account. */
async function newUserProblems(db: Db, env: Env, input: NewUserInput): Promise<{ errors: { field: string; message: string }[]; emailTaken: boolean }> {
  const errors: { field: string; message: string }[] = [];
  const email = typeof input.email === 'string' ? input.email.trim() : undefined;
  const emailOk = email !== undefined && EMAIL.test(email) && email.length <= 255;
  if (email !== undefined && !emailOk) errors.push({ field: 'email', message: 'must be a valid e-mail address' });
  if (typeof input.password === 'string') {
    if (input.password.length < MIN_PASSWORD_LENGTH) errors.push({ field: 'password', message: `must be at least ${MIN_PASSWORD_LENGTH} characters` });
    if (input.password.length > 1024) errors.push({ field: 'password', message: 'must be at most 1024 characters' });
  }
  const providerId = typeof input.provider_id === 'string' && input.provider_id ? input.provider_id : null;
  const [provider, taken] = await Promise.all([
    input.role === 'provider' && providerId
      ? db.selectFrom('providers').select('id').where('env', '=', env).where('id', '=', providerId).executeTakeFirst()
      : undefined,
    emailOk
      ? db.selectFrom('users').select('id').where('env', '=', env).where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase())).executeTakeFirst()
      : undefined,
  ]);
  if (input.role === 'provider') {
    if (!providerId) errors.push({ field: 'provider_id', message: 'is required for a provider' });
    else if (!provider) errors.push({ field: 'provider_id', message: `no provider ${providerId}` });
  } else if ((input.role === 'patient' || input.role === 'developer') && providerId) {
    errors.push({ field: 'provider_id', message: 'only a provider user has a provider id' });
  }
  if (taken) errors.push({ field: 'email', message: 'a user with this e-mail already exists' });
  return { errors, emailTaken: !!taken };
}

/**
 * Creates a user after checking every problem of the input ({@link newUserErrors}): throws
 * {@link EmailTaken} when the address already has an account and nothing else is wrong, otherwise
 * {@link UserInputError} naming the first problem.
 */
export async function createUser(
  db: Db,
  input: { env: Env; email: string; password: string; role: 'patient' | 'provider' | 'developer'; providerId?: string | null },
): Promise<NewUser> {
  const email = input.email.trim();
  const providerId = input.providerId ?? null;
  const { errors, emailTaken } = await newUserProblems(db, input.env, { email, password: input.password, role: input.role, provider_id: providerId });
  if (errors.length) {
    const Refused = emailTaken && errors.length === 1 ? EmailTaken : UserInputError;
    throw new Refused(errors[0]!.field, errors[0]!.message, errors);
  }
  const id = prefixedId('us');
  const passwordHash = await hashPassword(input.password);
  await db
    .insertInto('users')
    .values({ id, env: input.env, email, password_hash: passwordHash, role: input.role, provider_id: providerId })
    .execute();
  return { user_id: id, email, role: input.role, provider_id: providerId };
}
