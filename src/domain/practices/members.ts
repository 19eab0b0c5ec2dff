/**
 * A practice's staff logins (docs/decisions/0014-practice-workspace.md, "Accounts"; docs/auth.md,
 * "Practice accounts and sign-in"): a `users` row of role `staff` tied to one practice by
 * `practice_members`. The operator creates a practice's first admin; an admin invites (invitations.ts)
 * and removes staff. Removing a member revokes the user's token families, and the Practice API reads
 * the membership on every call, so the removal takes effect at once.
 */
import type { Db } from '../../db/database.js';
import type { Env, PracticeRole } from '../../db/schema.js';
import { secretToken } from '../../lib/ids.js';
import { conflict, notFound } from '../errors.js';
import { createInvitation, type NewInvitation } from './invitations.js';
import { insertMember, requirePractice } from './member-rows.js';

export { insertMember, requirePractice };

export interface PracticeMember {
  user_id: string;
  email: string;
  role: PracticeRole;
  created_at: string;
}

/** An admin created by the operator: with the password given, or with an invitation link that sets it. */
export interface NewPracticeAdmin {
  userId: string;
  email: string;
  /** Without a password: the one-time invitation (7 days) whose page sets it. */
  invitation?: NewInvitation;
}

/**
 * The operator creates an admin of practice `practiceId` (`carebook practice admin create`, `POST
 * /admin/v1/practices/{practice_id}/admins`): the login and membership at once, in one transaction,
 * with `password`, or else with an unusable random password and a one-time invitation (7 days)
 * whose acceptance sets it. The practice must be in the directory; the e-mail address unused.
 */
export async function createPracticeAdmin(db: Db, env: Env, input: { practiceId: string; email: string; password?: string }): Promise<NewPracticeAdmin> {
  await requirePractice(db, env, input.practiceId);
  return db.transaction().execute(async (trx) => {
    const password = input.password ?? secretToken();
    const created = await insertMember(trx, env, { practiceId: input.practiceId, email: input.email, password, role: 'practice_admin' });
    if (input.password !== undefined) return created;
    const invitation = await createInvitation(trx, env, { practiceId: input.practiceId, email: created.email, role: 'practice_admin', createdByUserId: null, userId: created.userId });
    return { ...created, invitation };
  });
}

/** The members of a practice, oldest first. */
export async function listMembers(db: Db, env: Env, practiceId: string): Promise<PracticeMember[]> {
  const rows = await db
    .selectFrom('practice_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.user_id', 'u.email', 'm.role', 'm.created_at'])
    .where('m.env', '=', env)
    .where('m.practice_id', '=', practiceId)
    .orderBy('m.created_at')
    .orderBy('m.user_id')
    .execute();
  return rows.map((r) => ({ user_id: r.user_id, email: r.email, role: r.role, created_at: r.created_at.toISOString() }));
}

/**
 * Removes member `userId` of practice `practiceId` (a member of another practice is `notFound`, so
 * ids cannot be probed): the membership goes, the user's token families are revoked and sign-in sessions ended.
 * The last admin of a practice cannot be removed (`conflict`). Admins of a practice are counted under
 * a lock of the practice's member rows, so two admins removing each other at once leave one.
 */
export async function removeMember(db: Db, env: Env, practiceId: string, userId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const members = await trx
      .selectFrom('practice_members')
      .select(['user_id', 'role'])
      .where('env', '=', env)
      .where('practice_id', '=', practiceId)
      .forUpdate()
      .execute();
    const member = members.find((m) => m.user_id === userId);
    if (!member) throw notFound(`no member ${userId} in this practice`, 'user_id');
    if (member.role === 'practice_admin' && members.filter((m) => m.role === 'practice_admin').length <= 1) {
      throw conflict('the last admin of a practice cannot be removed', 'user_id');
    }
    await trx.updateTable('token_families').set({ revoked_at: new Date() }).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
    await trx.deleteFrom('login_sessions').where('user_id', '=', userId).execute();
    await trx.deleteFrom('practice_members').where('user_id', '=', userId).where('env', '=', env).execute();
    // The login stays (audit rows name it) but opens nothing: the Practice API needs a membership.
    // An invitation to its e-mail address later ties it to a practice again (invitations.ts).
  });
}
