/**
 * The approval form's answer: deny (the request is completed, the client told `access_denied`) or
 * allow (a signed-in user gets the client an authorization code). Framework-free.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { accountMayUseClient } from './first-party.js';
import { issueAuthorizationCode } from './issue-code.js';
import { resumeLoginSession } from './login-sessions.js';
import type { StoredAuthorizationRequest } from './request-handle.js';

export type DecisionOutcome =
  | { kind: 'denied' }
  | { kind: 'approved'; code: string }
  /** Neither allow nor deny. */
  | { kind: 'no-choice' }
  /** Allow without a live login session: the user signs in first. */
  | { kind: 'sign-in-needed' }
  /** The request was completed meanwhile (a double submit). */
  | { kind: 'completed' }
  /** The signed-in account may not use this client (first-party.ts). */
  | { kind: 'wrong-account' };

/** Carries out `decision` (the form's value) on the pending request `request` for the session `sessionId`. */
export async function decide(
  db: Db,
  env: Env,
  request: StoredAuthorizationRequest,
  decision: unknown,
  sessionId: string | undefined,
): Promise<DecisionOutcome> {
  if (decision === 'deny') {
    const done = await db
      .updateTable('authorization_requests')
      .set({ completed_at: new Date() })
      .where('id_hash', '=', request.idHash)
      .where('completed_at', 'is', null)
      .returning('id_hash')
      .executeTakeFirst();
    return done ? { kind: 'denied' } : { kind: 'completed' };
  }
  if (decision !== 'allow') return { kind: 'no-choice' };
  const session = await resumeLoginSession(db, env, sessionId);
  if (!session) return { kind: 'sign-in-needed' };
  if (!accountMayUseClient(env, request.clientId, session.role)) return { kind: 'wrong-account' };
  const code = await issueAuthorizationCode(db, env, request, session.userId);
  return code ? { kind: 'approved', code } : { kind: 'completed' };
}
