/**
 * Who may sign in through which client (docs/auth.md, "Practice accounts and sign-in";
 * docs/decisions/0014-practice-workspace.md, "Sign-in"): the practice workspace is a first-party
 * client (no consent page, no patient sign-up) for practice staff and provider users only; a
 * developer's app is for patients and provider users, never for practice staff. Framework-free.
 */
import type { Env } from '../../db/schema.js';
import { workspaceClientId } from '../../domain/practices/workspace-client.js';

export type UserRole = 'patient' | 'provider' | 'staff';

/** Whether `clientId` is this environment's practice workspace (first-party: no consent page). */
export function isFirstPartyClient(env: Env, clientId: string): boolean {
  return clientId === workspaceClientId(env);
}

/** Whether an account of `role` may sign in through `clientId`. */
export function accountMayUseClient(env: Env, clientId: string, role: UserRole): boolean {
  return isFirstPartyClient(env, clientId) ? role === 'staff' || role === 'provider' : role !== 'staff';
}

/** The message of a sign-in refused by {@link accountMayUseClient}, in the user's words. */
export function wrongAccountMessage(env: Env, clientId: string, appName: string): string {
  return isFirstPartyClient(env, clientId)
    ? `This account cannot sign in to the ${appName}: it is for practice staff and providers. Patients sign in through the app they book with.`
    : `This account cannot sign in to ${appName}: practice staff accounts sign in only to the Carebook practice workspace.`;
}
