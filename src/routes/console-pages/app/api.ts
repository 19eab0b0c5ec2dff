/**
 * The Console API as the console page uses it (docs/console.md, "Routes"): one bearer token in the
 * Authorization header, JSON in and out, the API's error body (docs/api/errors.md) turned into an
 * `ApiError` whose message names each bad field. A 401 refreshes the token once.
 */
import type { UserTokenSource } from '../../../../clients/typescript/src/tokens.js';

export class ApiError extends Error {
  constructor(message: string, readonly status: number, readonly body: unknown) {
    super(message);
  }
}

export type Env = 'sandbox' | 'production';

/** `GET /console/v1/me`. */
export interface Me {
  user_id: string;
  email: string;
  developers: { developer_id: string; name: string; env: Env; created_at: string }[];
  production: {
    status: 'none' | 'pending' | 'granted' | 'refused';
    request_id: string | null;
    requested_at: string | null;
    decided_at: string | null;
    refusal_reason: string | null;
    console_url: string | null;
  };
}

/** One client of an app; `client_secret` only in the one answer that shows it. */
export interface Client {
  kind: 'machine' | 'user';
  client_id: string;
  scopes: string[];
  redirect_uris: string[];
  created_at: string;
  secret_rotated_at: string | null;
  previous_secret_expires_at: string | null;
  revoked_at: string | null;
  client_secret?: string;
}

export interface App {
  app_id: string;
  name: string;
  developer_id: string;
  env: Env;
  created_at: string;
  clients: Client[];
}

export interface Api {
  /** A JSON call; returns the body's `data`. */
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
}

function message(res: Response, body: unknown): string {
  const b = (body ?? {}) as { errors?: { field?: string; message: string }[] };
  const items = Array.isArray(b.errors) ? b.errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)) : [];
  return items.length ? items.join('; ') : `${res.status} ${res.statusText}`;
}

/** The API client over one signed-in session; `onSignedOut` runs when the session cannot be renewed. */
export function createApi(tokens: UserTokenSource, onSignedOut: () => void): Api {
  const authorized = async (path: string, init: RequestInit, retried = false): Promise<Response> => {
    const token = await tokens.getToken().catch(() => {
      onSignedOut();
      throw new ApiError('Your session has ended. Please sign in again.', 401, null);
    });
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    const res = await fetch(path, { ...init, headers });
    if (res.status === 401 && !retried && tokens.refreshToken) {
      tokens.invalidate();
      return authorized(path, init, true);
    }
    if (res.status === 401) onSignedOut();
    return res;
  };
  return {
    async call<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await authorized(path, {
        method,
        headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const parsed = res.status === 204 ? undefined : ((await res.json().catch(() => undefined)) as { data?: T } | undefined);
      if (!res.ok) throw new ApiError(message(res, parsed), res.status, parsed);
      return parsed?.data as T;
    },
  };
}

const enc = encodeURIComponent;
const V1 = '/console/v1';

export const getMe = (api: Api): Promise<Me> => api.call('GET', `${V1}/me`);
export const listApps = (api: Api): Promise<App[]> => api.call('GET', `${V1}/apps`);
/** Reads an app; the first read of a secret never shown shows it (docs/console.md, "Sign-up in the sandbox"). */
export const getApp = (api: Api, id: string): Promise<App> => api.call('GET', `${V1}/apps/${enc(id)}`);
export const createApp = (api: Api, body: { name: string; developer_id?: string; redirect_uris?: string[] }): Promise<App> => api.call('POST', `${V1}/apps`, body);
export const setRedirectUris = (api: Api, id: string, uris: string[]): Promise<App> => api.call('PUT', `${V1}/apps/${enc(id)}/redirect_uris`, { redirect_uris: uris });
export const rotate = (api: Api, id: string, clientId: string, graceSeconds: number): Promise<Client> =>
  api.call('POST', `${V1}/apps/${enc(id)}/credentials/${enc(clientId)}/rotate`, { grace_period_seconds: graceSeconds });
export const revoke = (api: Api, id: string, clientId: string): Promise<Client> => api.call('DELETE', `${V1}/apps/${enc(id)}/credentials/${enc(clientId)}`);
export const requestProduction = (api: Api, body: { company: string; use_case: string }): Promise<unknown> => api.call('POST', `${V1}/production-request`, body);
