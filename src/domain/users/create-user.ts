/** Creates a login for the authorization code flow (contracts.md §2 `user create`). */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { prefixedId } from '../../lib/ids.js';
import { hashPassword } from '../../lib/secrets.js';

export class UserInputError extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
  }
}

export interface NewUser {
  user_id: string;
  email: string;
  role: 'patient' | 'provider';
  provider_id: string | null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Minimum password length per NIST SP 800-63B §5.1.1.2. */
export const MIN_PASSWORD_LENGTH = 8;

export async function createUser(
  db: Db,
  input: { env: Env; email: string; password: string; role: 'patient' | 'provider'; providerId?: string | null },
): Promise<NewUser> {
  const email = input.email.trim();
  if (!EMAIL.test(email) || email.length > 255) throw new UserInputError('email', 'must be a valid e-mail address');
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw new UserInputError('password', `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (input.password.length > 1024) throw new UserInputError('password', 'must be at most 1024 characters');
  const providerId = input.providerId ?? null;
  if (input.role === 'provider') {
    if (!providerId) throw new UserInputError('provider_id', 'is required for a provider');
    const exists = await db
      .selectFrom('providers')
      .select('id')
      .where('env', '=', input.env)
      .where('id', '=', providerId)
      .executeTakeFirst();
    if (!exists) throw new UserInputError('provider_id', `no provider ${providerId}`);
  } else if (providerId) {
    throw new UserInputError('provider_id', 'only a provider user has a provider id');
  }
  const taken = await db
    .selectFrom('users')
    .select('id')
    .where('env', '=', input.env)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
  if (taken) throw new UserInputError('email', 'a user with this e-mail already exists');
  const id = prefixedId('us');
  const passwordHash = await hashPassword(input.password);
  await db
    .insertInto('users')
    .values({ id, env: input.env, email, password_hash: passwordHash, role: input.role, provider_id: providerId })
    .execute();
  return { user_id: id, email, role: input.role, provider_id: providerId };
}
