/**
 * Who may sign in through which client (docs/auth.md, "Practice accounts and sign-in", "Console
 * accounts and sign-in"; docs/decisions/0014-practice-workspace.md, "Sign-in";
 * docs/decisions/0015-developer-console.md, "Accounts"): Carebook's own clients are first-party (no
 * consent page). The practice workspace is for practice staff and provider users only, the developer
 * console for console (developer) accounts only; a developer's app is for patients and provider
 * users, never for staff or console accounts. Framework-free.
 */
import type { Env, UserRole } from '../../db/schema.js';
import { consoleClientId } from '../../domain/console/console-client.js';
import { workspaceClientId } from '../../domain/practices/workspace-client.js';

export type { UserRole };

/** Whether `clientId` is this environment's developer console. */
export function isConsoleClient(env: Env, clientId: string): boolean {
  return clientId === consoleClientId(env);
}

/** Whether `clientId` is one of Carebook's own clients (the practice workspace, the developer console): no consent page. */
export function isFirstPartyClient(env: Env, clientId: string): boolean {
  return clientId === workspaceClientId(env) || isConsoleClient(env, clientId);
}

/** Whether an account of `role` may sign in through `clientId`. */
export function accountMayUseClient(env: Env, clientId: string, role: UserRole): boolean {
  if (clientId === workspaceClientId(env)) return role === 'staff' || role === 'provider';
  if (isConsoleClient(env, clientId)) return role === 'developer';
  return role === 'patient' || role === 'provider';
}

/** Whether the sign-in page of `clientId` offers a sign-up (patients on developers' apps, developers on the console; not the workspace). */
export function offersSignUp(env: Env, clientId: string): boolean {
  return clientId !== workspaceClientId(env);
}

/** The message of a sign-in refused by {@link accountMayUseClient}, in the user's words. */
export function wrongAccountMessage(env: Env, clientId: string, appName: string): string {
  if (clientId === workspaceClientId(env)) {
    return `This account cannot sign in to the ${appName}: it is for practice staff and providers. Patients sign in through the app they book with.`;
  }
  if (isConsoleClient(env, clientId)) {
    return `This account cannot sign in to the ${appName}: it is for developer accounts. Create a developer account with another e-mail address.`;
  }
  return `This account cannot sign in to ${appName}: practice staff accounts sign in only to the Carebook practice workspace, developer accounts only to the Carebook developer console.`;
}
