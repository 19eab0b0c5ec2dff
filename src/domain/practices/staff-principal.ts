/**
 * Who calls the Practice API (docs/decisions/0014-practice-workspace.md): a staff member of one
 * practice, or a provider user reading their own calendar. The practice always comes from the
 * caller's membership, never from the request.
 */
import type { Env, PracticeRole } from '../../db/schema.js';
import { forbidden } from '../errors.js';

export type PracticeScope = 'practice.read' | 'practice.write' | 'practice.admin';
export const PRACTICE_SCOPES: readonly PracticeScope[] = ['practice.read', 'practice.write', 'practice.admin'];

export interface StaffPrincipal {
  env: Env;
  userId: string;
  practiceId: string;
  /** A member's role, or `provider` for a provider user (their own calendar only). */
  role: PracticeRole | 'provider';
  /** The provider a provider user is; null for staff. */
  providerId: string | null;
  /** The OAuth client the token was issued to (the workspace, or a practice system). */
  clientId: string;
  scopes: ReadonlySet<string>;
}

/** The most a role may hold (decision 0014, "Scopes"). */
export const ROLE_SCOPES: Record<StaffPrincipal['role'], readonly PracticeScope[]> = {
  practice_admin: ['practice.read', 'practice.write', 'practice.admin'],
  practice_staff: ['practice.read', 'practice.write'],
  provider: ['practice.read'],
};

/** Throws `forbidden` unless the caller's token carries `scope` (decision 0014, "Scopes"). */
export function requirePracticeScope(staff: StaffPrincipal, scope: PracticeScope): void {
  if (!staff.scopes.has(scope)) throw forbidden(scope, `this call needs the ${scope} scope`);
}

/** The actor of a staff member's change, for the audit log and the outbox (decision 0014, "One set of rules"). */
export function staffActor(staff: StaffPrincipal, requestId?: string): { kind: 'staff'; userId: string; practiceId: string; requestId?: string } {
  return { kind: 'staff', userId: staff.userId, practiceId: staff.practiceId, ...(requestId ? { requestId } : {}) };
}
