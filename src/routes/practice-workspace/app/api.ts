/**
 * The Practice API as the workspace uses it (docs/decisions/0014-practice-workspace.md): one bearer
 * token in the Authorization header, JSON in and out, the API's error body (docs/api/errors.md)
 * turned into an `ApiError` whose message names each bad field. A 401 refreshes the token once.
 */
import type { UserTokenSource } from '../../../../clients/typescript/src/tokens.js';

export class ApiError extends Error {
  constructor(message: string, readonly status: number, readonly body: unknown) {
    super(message);
  }
}

export interface ProviderLocation {
  provider_location_id: string;
  provider: { id: string; name: string };
  location: { id: string; name: string; time_zone: string };
  confirmation_type?: 'automatic' | 'manual';
}

export interface Me {
  user: { id: string; email: string };
  role: 'practice_admin' | 'practice_staff' | 'provider';
  practice: { id: string; name: string };
  scopes: string[];
  provider_locations: ProviderLocation[];
}

export interface Appointment {
  appointment_id: string;
  provider_location_id: string;
  start_time: string;
  end_time: string;
  appointment_status: string;
  confirmation_type?: string;
  visit_reason?: { id: string; name: string } | null;
  patient_type?: string;
  booked_by?: { app_name: string } | null;
  patient?: Record<string, unknown> | null;
  history?: { status: string; at: string; actor?: string }[];
}

export interface Slot { start_time: string; end_time?: string }
export interface TimeOff { time_off_id: string; start_time: string; end_time: string; note?: string | null; all_day?: boolean }

export interface CalendarRange {
  time_zone: string;
  appointments: Appointment[];
  open_slots: Slot[];
  time_off: TimeOff[];
}

export interface Api {
  /** A JSON call; returns the body's `data`. */
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** A raw authorized fetch (for the event stream). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  tokens: UserTokenSource;
}

function message(res: Response, body: unknown): string {
  const b = (body ?? {}) as { errors?: { field?: string; message: string }[] };
  const items = Array.isArray(b.errors) ? b.errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)) : [];
  return items.length ? items.join('; ') : `${res.status} ${res.statusText}`;
}

/** The API client over one signed-in session; `onSignedOut` runs when the session cannot be renewed. */
export function createApi(tokens: UserTokenSource, onSignedOut: () => void): Api {
  const authorized = async (path: string, init: RequestInit = {}, retried = false): Promise<Response> => {
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
    tokens,
    fetch: authorized,
    async call<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await authorized(path, {
        method,
        headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const parsed = res.status === 204 ? undefined : ((await res.json().catch(() => undefined)) as { data?: T } | undefined);
      if (!res.ok) throw new ApiError(message(res, parsed), res.status, parsed);
      return (parsed?.data ?? parsed) as T;
    },
  };
}

const q = (params: Record<string, string>): string => new URLSearchParams(params).toString();
const enc = encodeURIComponent;

/** GET /practice/v1/me: who is signed in, the practice, its provider-locations. */
export const getMe = (api: Api): Promise<Me> => api.call('GET', '/practice/v1/me');

/** The calendar of one provider-location for local dates `start`…`end` (inclusive). */
export const getCalendar = (api: Api, pl: string, start: string, end: string): Promise<CalendarRange> =>
  api.call('GET', `/practice/v1/calendar?${q({ provider_location_id: pl, start_date: start, end_date: end })}`);

export const getAppointment = (api: Api, id: string): Promise<Appointment> => api.call('GET', `/practice/v1/appointments/${enc(id)}`);

/** One of the practice's moves on an appointment (confirm, decline, cancel, move, arrived, no_show). */
export const act = (api: Api, id: string, action: string, body: Record<string, unknown> = {}): Promise<Appointment> =>
  api.call('POST', `/practice/v1/appointments/${enc(id)}/${action}`, body);
