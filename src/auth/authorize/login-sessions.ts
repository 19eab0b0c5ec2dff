/**
 * Login sessions of the sign-in page (docs/api/auth.md#lifetimes: 30 minutes of inactivity, one day at most).
 * The browser holds a random session id in an HttpOnly cookie; the database holds its SHA-256.
 */
import type { UserRole } from '../../db/schema.js';
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { secretToken } from '../../lib/ids.js';
import { hashToken } from '../../lib/secrets.js';
import { SESSION_IDLE_TTL_MS, SESSION_MAX_TTL_MS } from '../lifetimes.js';

export interface SessionUser {
  userId: string;
  email: string;
  role: UserRole;
}

/** Starts a session for a user who has just proved who they are; returns the cookie value. */
export async function startLoginSession(db: Db, env: Env, userId: string, anonymousSubject: string | null): Promise<string> {
  const id = secretToken();
  const now = Date.now();
  await db
    .insertInto('login_sessions')
    .values({
      id_hash: hashToken(id),
      env,
      user_id: userId,
      anonymous_subject: anonymousSubject,
      last_seen_at: new Date(now),
      expires_at: new Date(now + SESSION_MAX_TTL_MS),
    })
    .execute();
  if (Math.random() < 0.05) await db.deleteFrom('login_sessions').where('expires_at', '<', new Date(now)).execute();
  return id;
}

/** The signed-in user of a live session (and marks it used), or undefined. */
export async function resumeLoginSession(db: Db, env: Env, sessionId: string | undefined): Promise<SessionUser | undefined> {
  if (!sessionId || sessionId.length > 100) return undefined;
  const now = new Date();
  const row = await db
    .updateTable('login_sessions')
    .set({ last_seen_at: now })
    .from('users')
    .whereRef('users.id', '=', 'login_sessions.user_id')
    .where('login_sessions.id_hash', '=', hashToken(sessionId))
    .where('login_sessions.env', '=', env)
    .where('login_sessions.expires_at', '>', now)
    .where('login_sessions.last_seen_at', '>', new Date(now.getTime() - SESSION_IDLE_TTL_MS))
    .returning(['users.id', 'users.email', 'users.role'])
    .executeTakeFirst();
  return row ? { userId: row.id, email: row.email, role: row.role } : undefined;
}

/** Ends a session (sign out). */
export async function endLoginSession(db: Db, sessionId: string | undefined): Promise<void> {
  if (!sessionId || sessionId.length > 100) return;
  await db.deleteFrom('login_sessions').where('id_hash', '=', hashToken(sessionId)).execute();
}
