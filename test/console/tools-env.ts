/**
 * Helpers of the console tool route tests (docs/console.md, "Webhooks", "Request log", "Usage",
 * "Sandbox tools"): a console account with the machine credential of its sign-up app, and the list of
 * every tool route under /console/v1/developers/{developer_id}.
 */
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import type { TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';
import { newConsoleAccount, type ConsoleLogin } from '../helpers/console.js';

export type Method = 'GET' | 'PUT' | 'POST';

export interface ConsoleAccount extends ConsoleLogin {
  /** The sign-up app's machine credential (its secret read once from the console). */
  machine: NewDeveloper;
  /** A `/v1` client-credentials token of it. */
  machineToken: string;
}

/** A console account through the real pages, its sign-up app's secret read once over the Console API, and a `/v1` token. */
export async function consoleAccountWithMachine(t: TestApp): Promise<ConsoleAccount> {
  const login = await newConsoleAccount(t);
  const app = await t.app.inject({ url: `/console/v1/apps/${login.appId}`, headers: bearer(login.token) });
  if (app.statusCode !== 200) throw new Error(`reading the sign-up app: ${app.statusCode} ${app.body}`);
  const clients = app.json().data.clients as { kind: string; client_id: string; client_secret?: string }[];
  const m = clients.find((c) => c.kind === 'machine')!;
  const u = clients.find((c) => c.kind === 'user')!;
  const machine = { developer_id: login.developerId, client_id: m.client_id, client_secret: m.client_secret!, user_client_id: u.client_id } as NewDeveloper;
  return { ...login, machine, machineToken: await clientToken(t, machine) };
}

/** The tool routes' prefix for one developer. */
export const toolsBase = (developerId: string): string => `/console/v1/developers/${developerId}`;

/** Every tool route, with a payload that passes validation. */
export const toolRoutes = (): { method: Method; path: (dev: string) => string; payload?: unknown }[] => [
  { method: 'PUT', path: (d) => `${toolsBase(d)}/webhook`, payload: { url: 'http://127.0.0.1:9/nowhere' } },
  { method: 'GET', path: (d) => `${toolsBase(d)}/webhook` },
  { method: 'POST', path: (d) => `${toolsBase(d)}/webhook/test` },
  { method: 'GET', path: (d) => `${toolsBase(d)}/webhook/deliveries` },
  { method: 'POST', path: (d) => `${toolsBase(d)}/webhook/deliveries/ev_whatever/replay` },
  { method: 'POST', path: (d) => `${toolsBase(d)}/webhook/replays`, payload: { since: '2020-01-01T00:00:00Z' } },
  { method: 'GET', path: (d) => `${toolsBase(d)}/request-log` },
  { method: 'GET', path: (d) => `${toolsBase(d)}/usage` },
  { method: 'POST', path: (d) => `${toolsBase(d)}/sandbox/reset` },
  { method: 'GET', path: (d) => `${toolsBase(d)}/sandbox/fixtures` },
  { method: 'POST', path: (d) => `${toolsBase(d)}/sandbox/fixtures/failed/run` },
];
