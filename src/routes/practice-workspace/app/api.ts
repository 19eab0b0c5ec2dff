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

/** One provider at one location, as the workspace's pickers use it. */
export interface ProviderLocation {
  provider_location_id: string;
  provider: { id: string; name: string };
  location: { id: string; name: string; time_zone: string };
  confirmation_type: string;
}

/** `GET /practice/v1/me`, with the providers' provider-locations flattened for the pickers. */
export interface Me {
  user: { id: string; email: string };
  role: 'practice_admin' | 'practice_staff' | 'provider';
  practice: { id: string; name: string };
  scopes: string[];
  provider_locations: ProviderLocation[];
}

interface MeBody {
  user_id: string;
  email: string;
  role: Me['role'];
  practice: { id: string; name: string };
  scopes: string[];
  providers: { provider_id: string; name: string; provider_locations: { provider_location_id: string; location_id: string; location_name: string | null; time_zone: string; confirmation_type: string }[] }[];
}

/** An appointment in the calendar; the panel's read adds patient details and history. */
export interface Appointment {
  appointment_id: string;
  provider_location_id: string;
  appointment_status: string;
  confirmation_type: string;
  /** Local time with the location's offset. */
  start_time: string;
  end_time: string;
  arrived?: boolean;
  visit_reason?: { id: string; name: string } | null;
  patient_type?: string;
  patient?: Record<string, unknown> | null;
  /** The booking developer's app: its name in the calendar, `{developer_id, name}` in the appointment's read. */
  booked_by?: string | { developer_id: string; name: string } | null;
  history?: { at: string; action: string; actor_kind: string }[];
}

export interface Slot { start_time: string; start_time_utc: string; end_time_utc: string; visit_reason_id: string; patient_types: string[] }

/** Time off of a provider (every location) or of one provider-location, in local dates and times. */
export interface TimeOff {
  time_off_id: string;
  provider_location_id: string | null;
  start_date: string;
  end_date: string;
  start_local: string | null;
  end_local: string | null;
  note: string | null;
}

/** One provider-location's calendar over a range of local dates, with its time off. */
export interface CalendarRange {
  time_zone: string;
  days: { date: string; appointments: Appointment[]; open_slots: Slot[] }[];
  time_off: TimeOff[];
}

export interface Api {
  /** A JSON call; returns the body's `data`. */
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** A JSON call; returns the whole body (for answers with more than `data`, e.g. a dry run's `stranded`). */
  whole<T>(method: string, path: string, body?: unknown): Promise<T>;
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
      const parsed = await this.whole<{ data?: T } | undefined>(method, path, body);
      return (parsed?.data ?? parsed) as T;
    },
    async whole<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await authorized(path, {
        method,
        headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const parsed = res.status === 204 ? undefined : ((await res.json().catch(() => undefined)) as unknown);
      if (!res.ok) throw new ApiError(message(res, parsed), res.status, parsed);
      return parsed as T;
    },
  };
}

const q = (params: Record<string, string>): string => new URLSearchParams(params).toString();
const enc = encodeURIComponent;

/** GET /practice/v1/me: who is signed in, the practice, its provider-locations. */
export async function getMe(api: Api): Promise<Me> {
  const me = await api.call<MeBody>('GET', '/practice/v1/me');
  return {
    user: { id: me.user_id, email: me.email },
    role: me.role,
    practice: me.practice,
    scopes: me.scopes,
    provider_locations: me.providers.flatMap((p) =>
      p.provider_locations.map((pl) => ({
        provider_location_id: pl.provider_location_id,
        provider: { id: p.provider_id, name: p.name },
        location: { id: pl.location_id, name: pl.location_name ?? pl.location_id, time_zone: pl.time_zone },
        confirmation_type: pl.confirmation_type,
      })),
    ),
  };
}

interface CalendarBody {
  provider_locations: { provider_location_id: string; time_zone: string; days: CalendarRange['days'] }[];
}

/** The calendar and time off of one provider-location for local dates `from`…`to` (inclusive). */
export async function getCalendar(api: Api, pl: ProviderLocation, from: string, to: string): Promise<CalendarRange> {
  const [cal, off] = await Promise.all([
    api.call<CalendarBody>('GET', `/practice/v1/calendar?${q({ provider_id: pl.provider.id, provider_location_id: pl.provider_location_id, from, to })}`),
    api.call<TimeOff[]>('GET', `/practice/v1/time_off?${q({ provider_id: pl.provider.id, from, to })}`),
  ]);
  const mine = cal.provider_locations.find((x) => x.provider_location_id === pl.provider_location_id);
  return {
    time_zone: mine?.time_zone ?? pl.location.time_zone,
    days: mine?.days ?? [],
    time_off: off.filter((t) => t.provider_location_id === null || t.provider_location_id === pl.provider_location_id),
  };
}

export const getAppointment = (api: Api, id: string): Promise<Appointment> => api.call('GET', `/practice/v1/appointments/${enc(id)}`);

/** One of the practice's moves on an appointment (confirm, decline, cancel, move, arrived, no_show). */
export const act = (api: Api, id: string, action: string, body: Record<string, unknown> = {}): Promise<Appointment> =>
  api.call('POST', `/practice/v1/appointments/${enc(id)}/${action}`, body);
