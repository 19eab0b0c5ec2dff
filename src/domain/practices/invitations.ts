/**
 * Invitations to a practice (docs/decisions/0014-practice-workspace.md, "Accounts"; docs/auth.md,
 * "Practice accounts and sign-in"): a one-time link for one e-mail address and role, its token stored
 * only as a SHA-256 hash, valid 7 days. Accepting sets the password and creates the login and the
 * membership in one transaction that first marks the invitation used, so of two acceptances at once
 * exactly one succeeds. Framework-free.
 */
import type { Db } from '../../db/database.js';
import type { Env, PracticeRole } from '../../db/schema.js';
import { secretToken } from '../../lib/ids.js';
import { hashPassword, hashToken } from '../../lib/secrets.js';
import { forbidden, invalidFields, invalidInput, notFound } from '../errors.js';
import { MIN_PASSWORD_LENGTH } from '../users/create-user.js';
import { insertMember, requirePractice } from './member-rows.js';
import type { StaffPrincipal } from './staff-principal.js';

/** How long an invitation can be accepted. */
export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface NewInvitation {
  /** The one-time token: shown once (in the invitation link), stored only as its hash. */
  token: string;
  practiceId: string;
  email: string;
  role: PracticeRole;
  expiresAt: Date;
}

/** The link of an invitation: the page that sets the password (docs/auth.md, "Practice accounts and sign-in"). */
export function invitationUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/practice/invitations/${encodeURIComponent(token)}`;
}

/** An invitation that can still be accepted, as its page shows it. */
export interface OpenInvitation {
  email: string;
  role: PracticeRole;
  practiceId: string;
  practiceName: string;
  expiresAt: Date;
}

/**
 * Whether `email` can be invited: well-formed, and not the address of another login, unless that
 * login is a staff member removed from their practice (who may be invited back).
 */
async function invitableEmailErrors(db: Db, env: Env, email: string): Promise<{ field: string; message: string }[]> {
  if (!EMAIL.test(email) || email.length > 255) return [{ field: 'email', message: 'must be a valid e-mail address' }];
  const user = await db
    .selectFrom('users as u')
    .leftJoin('practice_members as m', 'm.user_id', 'u.id')
    .select(['u.role', 'm.practice_id'])
    .where('u.env', '=', env)
    .where((eb) => eb(eb.fn('lower', ['u.email']), '=', email.toLowerCase()))
    .executeTakeFirst();
  if (user && (user.role !== 'staff' || user.practice_id)) return [{ field: 'email', message: 'a user with this e-mail already exists' }];
  return [];
}

/** Creates an invitation of `practiceId` (which the caller has checked exists). */
export async function createInvitation(
  db: Db,
  env: Env,
  input: { practiceId: string; email: string; role: PracticeRole; createdByUserId: string | null; userId?: string },
): Promise<NewInvitation> {
  const email = input.email.trim();
  if (!input.userId) {
    const errors = await invitableEmailErrors(db, env, email);
    if (errors.length) throw invalidFields(errors);
  }
  const token = secretToken();
  const expiresAt = new Date(Date.now() + INVITATION_TTL_MS);
  await db
    .insertInto('practice_invitations')
    .values({ token_hash: hashToken(token), env, practice_id: input.practiceId, email, role: input.role, created_by_user_id: input.createdByUserId, expires_at: expiresAt, user_id: input.userId ?? null })
    .execute();
  return { token, practiceId: input.practiceId, email, role: input.role, expiresAt };
}

/** A practice admin invites a staff member or another admin of their own practice (`POST /practice/v1/staff`). */
export async function inviteStaff(db: Db, staff: StaffPrincipal, input: { email: string; role: PracticeRole }): Promise<NewInvitation> {
  if (staff.role !== 'practice_admin') throw forbidden('practice.admin', 'only a practice admin may invite staff');
  await requirePractice(db, staff.env, staff.practiceId);
  return createInvitation(db, staff.env, { practiceId: staff.practiceId, email: input.email, role: input.role, createdByUserId: staff.userId });
}

/** The invitation of `token` if it can still be accepted (unused, unexpired, its practice in the directory). */
export async function openInvitation(db: Db, env: Env, token: string): Promise<OpenInvitation | undefined> {
  if (!token || token.length > 200) return undefined;
  const row = await db
    .selectFrom('practice_invitations as i')
    .innerJoin('practices as p', (j) => j.onRef('p.id', '=', 'i.practice_id').onRef('p.env', '=', 'i.env'))
    .select(['i.email', 'i.role', 'i.practice_id', 'p.name', 'i.expires_at'])
    .where('i.token_hash', '=', hashToken(token))
    .where('i.env', '=', env)
    .where('i.accepted_at', 'is', null)
    .where('i.expires_at', '>', new Date())
    .executeTakeFirst();
  return row ? { email: row.email, role: row.role, practiceId: row.practice_id, practiceName: row.name, expiresAt: row.expires_at } : undefined;
}

/**
 * Accepts invitation `token` with `password`: marks it used, then sets the password of the login the
 * operator made with it, or creates the login and membership (or ties a removed staff member's login
 * to the practice again, with the new password), all in one
 * transaction. `notFound` for an unknown, used or expired token; a bad password is `invalid` and
 * leaves the invitation usable.
 */
export async function acceptInvitation(db: Db, env: Env, token: string, password: string): Promise<{ userId: string; email: string; practiceId: string }> {
  if (password.length < MIN_PASSWORD_LENGTH) throw invalidInput('password', `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > 1024) throw invalidInput('password', 'must be at most 1024 characters');
  if (!token || token.length > 200) throw notFound('this invitation is unknown, used or expired', 'token');
  return db.transaction().execute(async (trx) => {
    // The conditional update is the single use: a second acceptance waits for this row, then finds it used.
    const inv = await trx
      .updateTable('practice_invitations')
      .set({ accepted_at: new Date() })
      .where('token_hash', '=', hashToken(token))
      .where('env', '=', env)
      .where('accepted_at', 'is', null)
      .where('expires_at', '>', new Date())
      .returning(['token_hash', 'practice_id', 'email', 'role', 'created_by_user_id', 'user_id'])
      .executeTakeFirst();
    if (!inv) throw notFound('this invitation is unknown, used or expired', 'token');
    let userId: string;
    const made = inv.user_id
      ? await trx.selectFrom('practice_members').select('user_id').where('user_id', '=', inv.user_id).where('practice_id', '=', inv.practice_id).executeTakeFirst()
      : undefined;
    const removed = made
      ? undefined
      : await trx
          .selectFrom('users as u')
          .leftJoin('practice_members as m', 'm.user_id', 'u.id')
          .select(['u.id', 'u.role', 'm.practice_id'])
          .where('u.env', '=', env)
          .where((eb) => eb(eb.fn('lower', ['u.email']), '=', inv.email.toLowerCase()))
          .executeTakeFirst();
    if (made) {
      // The operator made this admin's login with the invitation: the password is set now.
      userId = made.user_id;
      await trx.updateTable('users').set({ password_hash: await hashPassword(password) }).where('id', '=', userId).execute();
    } else if (removed && removed.role === 'staff' && !removed.practice_id) {
      userId = removed.id;
      await trx.updateTable('users').set({ password_hash: await hashPassword(password) }).where('id', '=', userId).execute();
      await trx.insertInto('practice_members').values({ env, practice_id: inv.practice_id, user_id: userId, role: inv.role, created_by_user_id: inv.created_by_user_id }).execute();
    } else {
      ({ userId } = await insertMember(trx, env, { practiceId: inv.practice_id, email: inv.email, password, role: inv.role, createdByUserId: inv.created_by_user_id }));
    }
    await trx.updateTable('practice_invitations').set({ user_id: userId }).where('token_hash', '=', inv.token_hash).execute();
    return { userId, email: inv.email, practiceId: inv.practice_id };
  });
}
