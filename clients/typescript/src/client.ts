/**
 * The Carebook client: a typed `openapi-fetch` client over the generated `paths`, with bearer
 * tokens, `Idempotency-Key` on every write, retries that honour `Retry-After`, and async iterators
 * over every paginated listing.
 */
import createClient, { type Client } from 'openapi-fetch';
import { errorFromResponse } from './errors.js';
import type { paths } from './generated/schema.js';
import { withRetries, type RetryOptions } from './retry.js';
import { ClientCredentialsTokenSource, requestToken, staticToken, type TokenResponse, type TokenSource } from './tokens.js';

export type { paths } from './generated/schema.js';

export interface CarebookClientOptions {
  /** `{base_url}`, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** `{auth_url}`; default `${baseUrl}/auth`. */
  authUrl?: string;
  /** Client-credentials audience; default `${baseUrl}/`. */
  audience?: string;
  /** Machine-to-machine credentials (backends only: never ship a secret to a browser or app). */
  clientCredentials?: { clientId: string; clientSecret: string; scope?: string };
  /** Any other token source (a user's tokens, an anonymous token) or a fixed token string. */
  token?: TokenSource | string;
  /** Retry policy for 429/503 and network failures (API calls and client-credentials token requests); `false` turns retries off. */
  retry?: RetryOptions | false;
  /** Makes idempotency keys (default `crypto.randomUUID()`). */
  idempotencyKey?: () => string;
  /** The fetch to use (default the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Paths of the listings with the `page`/`page_size`/`next_url` envelope. */
export type PagedPath =
  | '/v1/appointments'
  | '/v1/reference/npi'
  | '/v1/specialties'
  | '/v1/visit_reasons'
  | '/v1/insurance_plans'
  | '/v1/schedulable_entities'
  | '/v1/provider_locations'
  | '/v1-beta/facilities';

/** Query parameters of a GET operation. */
export type QueryOf<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never;
/** The 200 body of a GET operation. */
export type BodyOf<P extends keyof paths> = paths[P] extends { get: { responses: { 200: { content: { 'application/json': infer B } } } } } ? B : never;

type CalendarPath = '/v1/providers/{provider_id}/calendar/timeslots';
type CalendarQuery = Omit<QueryOf<CalendarPath>, 'next_page_token'>;
export type Appointment = BodyOf<'/v1/appointments'>['data'][number];
export type ProviderLocation = BodyOf<'/v1/provider_locations'>['data']['provider_locations'][number];
export type CalendarTimeslot = BodyOf<CalendarPath>['data'][number];
/** The body of a booking request (`POST /v1/appointments`). */
export type BookingRequest = paths['/v1/appointments']['post']['requestBody']['content']['application/json'];
/** A patient address's state code, one of those the service takes. */
export type StateCode = BookingRequest['data']['patient']['patient_address']['state'];

/**
 * Returns the data of an openapi-fetch result, or throws a `CarebookError` built from the error
 * body (with `status`, `requestId`, `errorType` and `errors`).
 */
export async function unwrap<T>(result: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await result;
  if (!response.ok || data === undefined) throw errorFromResponse(response, error);
  return data;
}

export interface CarebookClient {
  /** The typed API: `api.GET('/v1/specialties', { params: { query: { page_size: 5 } } })`. */
  api: Client<paths>;
  /** The token source in use, if any. */
  tokens: TokenSource | undefined;
  /** `{auth_url}/oauth/token`. */
  tokenUrl: string;
  /** Every page of a paginated listing, following `next_url` until it is null. */
  pages<P extends PagedPath>(path: P, query?: QueryOf<P>): AsyncGenerator<BodyOf<P>>;
  /** Every appointment the credential may see (at most 1 000: the service's pagination limit). */
  appointments(query?: QueryOf<'/v1/appointments'>): AsyncGenerator<Appointment>;
  /** Every active NPI. */
  npis(query?: QueryOf<'/v1/reference/npi'>): AsyncGenerator<string>;
  specialties(query?: QueryOf<'/v1/specialties'>): AsyncGenerator<BodyOf<'/v1/specialties'>['data'][number]>;
  visitReasons(query?: QueryOf<'/v1/visit_reasons'>): AsyncGenerator<BodyOf<'/v1/visit_reasons'>['data'][number]>;
  insurancePlans(query?: QueryOf<'/v1/insurance_plans'>): AsyncGenerator<BodyOf<'/v1/insurance_plans'>['data'][number]>;
  schedulableEntities(query?: QueryOf<'/v1/schedulable_entities'>): AsyncGenerator<BodyOf<'/v1/schedulable_entities'>['data']['schedulable_entities'][number]>;
  /** Provider locations near a ZIP code, nearest first. */
  providerLocations(query: QueryOf<'/v1/provider_locations'>): AsyncGenerator<ProviderLocation>;
  facilities(query: QueryOf<'/v1-beta/facilities'>): AsyncGenerator<BodyOf<'/v1-beta/facilities'>['data'][number]>;
  /** A provider's calendar timeslots on one date, following `next_page_token`. */
  calendarTimeslots(providerId: string, query: CalendarQuery): AsyncGenerator<CalendarTimeslot>;
  /** An anonymous end-user token for the app's user client (docs/auth.md, "Anonymous tokens"). */
  anonymousToken(appClientId: string): Promise<TokenResponse>;
}

/** Creates a client. Give it `clientCredentials` on a backend, or a user's `token` source. */
export function createCarebookClient(opts: CarebookClientOptions): CarebookClient {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const authUrl = (opts.authUrl ?? `${baseUrl}/auth`).replace(/\/+$/, '');
  const tokenUrl = `${authUrl}/oauth/token`;
  const rawFetch = opts.fetch ?? ((r: Request) => globalThis.fetch(r));
  // API calls and token requests alike are retried on 429/503, honouring Retry-After.
  const retrying = opts.retry === false ? rawFetch : withRetries(rawFetch, opts.retry);
  const tokens: TokenSource | undefined =
    typeof opts.token === 'string'
      ? staticToken(opts.token)
      : (opts.token ??
        (opts.clientCredentials
          ? new ClientCredentialsTokenSource({
              tokenUrl,
              clientId: opts.clientCredentials.clientId,
              clientSecret: opts.clientCredentials.clientSecret,
              scope: opts.clientCredentials.scope,
              audience: opts.audience ?? `${baseUrl}/`,
              fetch: (input, init) => retrying(new Request(input, init)),
            })
          : undefined));
  const newKey = opts.idempotencyKey ?? (() => crypto.randomUUID());

  const send = async (request: Request): Promise<Response> => {
    if (WRITE_METHODS.has(request.method) && !request.headers.has('idempotency-key')) request.headers.set('idempotency-key', newKey());
    if (!tokens || request.headers.has('authorization')) return retrying(request);
    const first = request.clone();
    request.headers.set('authorization', `Bearer ${await tokens.getToken()}`);
    const res = await retrying(request);
    if (res.status !== 401 || !tokens.invalidate) return res;
    // An expired or revoked token: renew once and send again (same Idempotency-Key).
    tokens.invalidate();
    void res.body?.cancel().catch(() => undefined);
    first.headers.set('authorization', `Bearer ${await tokens.getToken()}`);
    return retrying(first);
  };

  const api = createClient<paths>({ baseUrl, fetch: send });

  async function* pages<P extends PagedPath>(path: P, query?: QueryOf<P>): AsyncGenerator<BodyOf<P>> {
    let page = Number((query as { page?: number } | undefined)?.page ?? 0);
    for (;;) {
      const body = (await unwrap(
        (api.GET as (p: string, o: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>)(path, { params: { query: { ...query, page } } }),
      )) as Awaited<BodyOf<P>> & { next_url?: string | null };
      yield body;
      if (!body.next_url) return;
      page += 1;
    }
  }

  async function* flat<P extends PagedPath, T>(path: P, query: QueryOf<P> | undefined, pick: (b: BodyOf<P>) => T[]): AsyncGenerator<T> {
    for await (const body of pages(path, query)) yield* pick(body);
  }

  return {
    api,
    tokens,
    tokenUrl,
    pages,
    appointments: (q) => flat('/v1/appointments', q, (b) => b.data),
    npis: (q) => flat('/v1/reference/npi', q, (b) => b.data.npis),
    specialties: (q) => flat('/v1/specialties', q, (b) => b.data),
    visitReasons: (q) => flat('/v1/visit_reasons', q, (b) => b.data),
    insurancePlans: (q) => flat('/v1/insurance_plans', q, (b) => b.data),
    schedulableEntities: (q) => flat('/v1/schedulable_entities', q, (b) => b.data.schedulable_entities),
    providerLocations: (q) => flat('/v1/provider_locations', q, (b) => b.data.provider_locations),
    facilities: (q) => flat('/v1-beta/facilities', q, (b) => b.data),
    async *calendarTimeslots(providerId, query) {
      let token: string | undefined;
      do {
        const body = await unwrap(
          api.GET('/v1/providers/{provider_id}/calendar/timeslots', {
            params: { path: { provider_id: providerId }, query: { ...query, ...(token ? { next_page_token: token } : {}) } as QueryOf<CalendarPath> },
          }),
        );
        yield* body.data;
        token = body.next_page_token ?? undefined;
      } while (token);
    },
    async anonymousToken(appClientId) {
      const body = await unwrap(api.POST('/v1/token/anonymous-user', { body: { app_client_id: appClientId } }));
      return body.data as TokenResponse;
    },
  };
}

export { requestToken };
