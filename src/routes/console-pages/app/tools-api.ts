/**
 * The Console API's developer tool routes as the console page uses them (docs/console.md,
 * "Webhooks", "Request log", "Usage", "Sandbox tools"), all under
 * `/console/v1/developers/{developer_id}`.
 */
import type { Api, Me } from './api.js';

export interface Answer { status_code: number | null; latency_ms: number; error: string | null; response_excerpt: string | null; answer_withheld: boolean }
export interface Receiver { url: string; updated_at: string; previous_key_expires_at: string | null }
export interface Delivery extends Answer {
  attempted_at: string; event_id: string; event_kind: 'appointment' | 'test'; appointment_id: string | null;
  update_type: 'created' | 'updated' | 'cancelled' | null; event_status: string; attempt: number; url: string;
}
export interface LoggedRequest { request_id: string; at: string; method: string; path: string; status: number; latency_ms: number; client_id: string; error: Record<string, unknown> | null }
export interface UsageClient { client_id: string; kind: 'machine' | 'user' | null; requests: number; errors: number; error_rate: number }
export interface UsageDay { day: string; app_id: string | null; app_name: string | null; requests: number; errors: number; error_rate: number; clients: UsageClient[] }
export interface Usage {
  days: UsageDay[];
  rate_limit: {
    per_minute: number; used_last_minute: number; remaining: number;
    by_app: { app_id: string | null; app_name: string | null; requests: number }[];
    by_client: { client_id: string; app_id: string | null; requests: number }[];
  };
}
export interface Fixture { name: string; provider_location_id: string; outcome: string; webhook: boolean }
export interface FixtureRun { fixture: Fixture; appointment_id: string; appointment_status: string; start_time: string }
export type Page<K extends string, T> = Record<K, T[]> & { next_cursor: string | null };

/** The account's sandbox developer (the tools work on it); null when the account has none. */
export const sandboxDeveloper = (me: Me): string | null => me.developers.find((d) => d.env === 'sandbox')?.developer_id ?? null;

/** A query string of the non-empty values. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The tool calls for one developer. */
export function toolsApi(api: Api, developerId: string) {
  const base = `/console/v1/developers/${encodeURIComponent(developerId)}`;
  return {
    receiver: (): Promise<Receiver | null> => api.call('GET', `${base}/webhook`),
    setReceiver: (body: { url: string; key?: string }): Promise<{ url: string; generated_key: string | null; previous_key_expires_at: string | null }> => api.call('PUT', `${base}/webhook`, body),
    sendTest: (): Promise<Answer & { event_id: string; delivered: boolean }> => api.call('POST', `${base}/webhook/test`),
    deliveries: (q: { appointment_id?: string; status?: string; cursor?: string }): Promise<Page<'deliveries', Delivery>> => api.call('GET', `${base}/webhook/deliveries${query({ ...q, page_size: 20 })}`),
    replay: (eventId: string): Promise<{ event_id: string; status: 'pending' }> => api.call('POST', `${base}/webhook/deliveries/${encodeURIComponent(eventId)}/replay`),
    replayFailed: (since: string): Promise<{ replayed: number }> => api.call('POST', `${base}/webhook/replays`, { since }),
    requests: (q: { request_id?: string; status?: string; cursor?: string }): Promise<Page<'requests', LoggedRequest>> => api.call('GET', `${base}/request-log${query({ ...q, page_size: 20 })}`),
    usage: (days = 14): Promise<Usage> => api.call('GET', `${base}/usage${query({ days })}`),
    reset: (): Promise<Record<string, number>> => api.call('POST', `${base}/sandbox/reset`),
    fixtures: (): Promise<Fixture[]> => api.call('GET', `${base}/sandbox/fixtures`),
    runFixture: (name: string): Promise<FixtureRun> => api.call('POST', `${base}/sandbox/fixtures/${encodeURIComponent(name)}/run`),
  };
}
export type ToolsApi = ReturnType<typeof toolsApi>;
