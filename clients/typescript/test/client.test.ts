/**
 * @carebook/client against the real service (listening on 127.0.0.1, fresh database, demo
 * directory): tokens (retried on 429/503), pagination, booking with idempotency keys, errors,
 * anonymous tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientCredentialsTokenSource, CarebookError, createCarebookClient, staticToken, unwrap, type CarebookClient } from '../src/index.js';
import { startProxy } from './proxy.js';
import { startService, type Service } from './service.js';

describe('@carebook/client against the service', () => {
  let s: Service;
  let client: CarebookClient;

  beforeAll(async () => {
    s = await startService();
    client = createCarebookClient({ baseUrl: s.baseUrl, clientCredentials: { clientId: s.creds.client_id, clientSecret: s.creds.client_secret } });
  });
  afterAll(async () => s?.close());

  it('caches the client-credentials token and renews it before expiry', async () => {
    let now = Date.now();
    const source = new ClientCredentialsTokenSource({
      tokenUrl: `${s.baseUrl}/auth/oauth/token`,
      clientId: s.creds.client_id,
      clientSecret: s.creds.client_secret,
      audience: `${s.baseUrl}/`,
      now: () => now,
    });
    const [a, b] = await Promise.all([source.getToken(), source.getToken()]);
    expect(a).toBe(b);
    expect(await source.getToken()).toBe(a);
    expect(source.requests).toBe(1);
    now += 3600_000 - 59_000; // inside the 60 s renewal margin of a 60-minute token
    const renewed = await source.getToken();
    expect(source.requests).toBe(2);
    expect(renewed).not.toBe(a);
  });

  it('a wrong secret is a CarebookError with the OAuth error', async () => {
    const bad = createCarebookClient({ baseUrl: s.baseUrl, clientCredentials: { clientId: s.creds.client_id, clientSecret: 'nope' } });
    const err = await bad.api.GET('/v1/specialties').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CarebookError);
    expect(err).toMatchObject({ status: 401, errorType: 'invalid_client' });
  });

  it('renews the token once when the API answers 401', async () => {
    let calls = 0;
    const flaky = {
      getToken: async () => (++calls === 1 ? 'expired-token' : await client.tokens!.getToken()),
      invalidate: () => undefined,
    };
    const c = createCarebookClient({ baseUrl: s.baseUrl, token: flaky });
    const body = await unwrap(c.api.GET('/v1/specialties', { params: { query: { page_size: 1 } } }));
    expect(body.data).toHaveLength(1);
    expect(calls).toBe(2);
  });

  it('retries token requests answered 429 or 503, waiting as Retry-After says', async () => {
    const plan = [
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 503, headers: { 'retry-after': '0' } },
    ];
    const proxy = await startProxy(s.baseUrl, (path) => (path.startsWith('/auth/oauth/token') ? plan.shift() : undefined));
    try {
      const c = createCarebookClient({
        baseUrl: proxy.url,
        audience: `${s.baseUrl}/`,
        clientCredentials: { clientId: s.creds.client_id, clientSecret: s.creds.client_secret },
        retry: { baseDelayMs: 10 },
      });
      const body = await unwrap(c.api.GET('/v1/specialties', { params: { query: { page_size: 1 } } }));
      expect(body.data).toHaveLength(1);
      const tokenCalls = proxy.seen.filter((x) => x.path.startsWith('/auth/oauth/token'));
      expect(tokenCalls.map((x) => x.status)).toEqual([429, 503, 200]);
      expect(tokenCalls[1]!.at - tokenCalls[0]!.at).toBeGreaterThanOrEqual(950);
      expect(proxy.seen.at(-1)).toMatchObject({ path: expect.stringMatching(/^\/v1\/specialties\?/), status: 200 });
    } finally {
      await proxy.close();
    }
  });

  it('iterates every page of the envelope listings', async () => {
    const first = await unwrap(client.api.GET('/v1/specialties', { params: { query: { page_size: 500 } } }));
    const all = [];
    for await (const sp of client.specialties({ page_size: 3 })) all.push(sp.id);
    expect(all).toEqual(first.data.map((x) => x.id));
    expect(all.length).toBe(first.total_count);
    expect(all.length).toBeGreaterThan(3);

    const npis = [];
    for await (const n of client.npis({ page_size: 7 })) npis.push(n);
    expect(new Set(npis).size).toBe(npis.length);
    expect(npis.length).toBeGreaterThanOrEqual(30);

    let pages = 0;
    for await (const page of client.pages('/v1/visit_reasons', { page_size: 10 })) {
      pages += 1;
      expect(page.page_size).toBe(10);
    }
    expect(pages).toBeGreaterThan(1);

    const plans = [];
    for await (const p of client.insurancePlans({ page_size: 4 })) plans.push(p.id);
    expect(plans.length).toBeGreaterThan(4);

    const entities = [];
    for await (const e of client.schedulableEntities({ page_size: 8 })) entities.push(e.id);
    expect(entities.length).toBeGreaterThan(8);
  });

  it('iterates every page of the beta facilities', async () => {
    const npis: string[] = [];
    for await (const n of client.npis({ page_size: 50 })) npis.push(n);
    const query = { npis: npis.slice(0, 50).join(',') };
    const one = await unwrap(client.api.GET('/v1-beta/facilities', { params: { query: { ...query, page_size: 100 } } }));
    expect(one.total_count).toBeGreaterThan(1); // the demo directory's facilities
    const all = [];
    for await (const f of client.facilities({ ...query, page_size: 1 })) all.push(f.facility_id);
    expect(all).toEqual(one.data.map((f) => f.facility_id));
    expect(all).toHaveLength(one.total_count);
    let pages = 0;
    for await (const page of client.pages('/v1-beta/facilities', { ...query, page_size: 1 })) {
      pages += 1;
      expect(page.data).toHaveLength(1);
    }
    expect(pages).toBe(one.total_count);
  });

  it('finds, checks availability, books with an Idempotency-Key, lists and cancels', async () => {
    const keys: string[] = [];
    const c = createCarebookClient({
      baseUrl: s.baseUrl,
      clientCredentials: { clientId: s.creds.client_id, clientSecret: s.creds.client_secret },
      idempotencyKey: () => {
        keys.push(`key-${keys.length}-${Date.now()}`);
        return keys[keys.length - 1]!;
      },
    });
    const entity = (await unwrap(c.api.GET('/v1/schedulable_entities', { params: { query: { page_size: 50 } } }))).data.schedulable_entities.find(
      (e) => e.new_patient_availability.next_28_days !== 'none' && !e.id.startsWith('pr_pending') && !e.id.startsWith('pr_failed'),
    )!;
    const providerLocation = (await unwrap(c.api.GET('/v1/provider_locations/{provider_location_id}', { params: { path: { provider_location_id: entity.id } } }))).data;
    const zip = providerLocation.location!.zip_code;
    const visitReason = providerLocation.provider.default_visit_reason_id!;
    const found = [];
    for await (const pl of c.providerLocations({ zip_code: zip, visit_reason_id: visitReason, page_size: 2 })) found.push(pl.provider_location_id);
    expect(found).toContain(entity.id);

    const availability = await unwrap(
      c.api.GET('/v1/provider_locations/availability', {
        params: { query: { provider_location_ids: entity.id, visit_reason_id: visitReason, patient_type: 'new' } },
      }),
    );
    const slots = availability.data[0]!.timeslots;
    expect(slots.length).toBeGreaterThan(2);

    const ids: string[] = [];
    for (const slot of slots.slice(0, 3)) {
      const booked = await unwrap(
        c.api.POST('/v1/appointments', {
          body: {
            appointment_type: 'providers',
            data: {
              start_time: slot.start_time,
              visit_reason_id: visitReason,
              provider_location_id: entity.id,
              patient_type: 'new',
              patient: {
                developer_patient_id: 'client-test',
                first_name: 'Ada',
                last_name: 'Lovelace',
                date_of_birth: '1990-05-17',
                sex_at_birth: 'female',
                phone_number: '2125550123',
                email_address: 'ada@example.org',
                patient_address: { address1: '1 Main St', city: 'New York', state: 'NY', zip_code: '10001' },
              },
            },
          },
        }),
      );
      ids.push(booked.data.appointment_id);
    }
    expect(keys.length).toBe(3);

    // The same key and body again answers the first answer (docs/api/errors.md, "Statuses").
    const again = await fetch(`${s.baseUrl}/v1/appointments/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await c.tokens!.getToken()}`, 'content-type': 'application/json', 'idempotency-key': 'fixed-key' },
      body: JSON.stringify({ appointment_id: ids[2] }),
    });
    const viaClient = await unwrap(c.api.POST('/v1/appointments/cancel', { body: { appointment_id: ids[2]! }, headers: { 'idempotency-key': 'fixed-key' } }));
    expect(again.status).toBe(200);
    expect(viaClient.data.appointment_status).toBe('cancelled');
    expect(keys.length).toBe(3); // a caller's own key is kept

    const listed = [];
    for await (const a of c.appointments({ page_size: 1, developer_patient_id: 'client-test' })) listed.push(a.appointment_id);
    expect(listed.sort()).toEqual([...ids].sort());

    const err = await unwrap(c.api.POST('/v1/appointments/cancel', { body: { appointment_id: ids[2]! } })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CarebookError);
    expect(err).toMatchObject({ status: 409, errorType: expect.any(String), requestId: expect.any(String) });
  });

  it('iterates calendar timeslots by next_page_token', async () => {
    const entity = (await unwrap(client.api.GET('/v1/schedulable_entities', { params: { query: { page_size: 5 } } }))).data.schedulable_entities[0]!;
    const [providerId, locationId] = entity.id.split('|') as [string, string];
    const date = '2031-03-04';
    const timeslots = ['09:00', '09:30', '10:00'].map((t) => ({ provider_id: providerId, location_id: locationId, start_time: `${date}T${t}`, time_zone: entity.time_zone ?? 'America/New_York' }));
    await unwrap(client.api.PUT('/v1/providers/{provider_id}/calendar/timeslots', { params: { path: { provider_id: providerId }, query: { date } }, body: { timeslots } }));
    const got = [];
    for await (const slot of client.calendarTimeslots(providerId, { date, limit: 1 })) got.push(slot.start_time);
    expect(got.map((x) => x.slice(0, 16)).sort()).toEqual(timeslots.map((x) => x.start_time));
  });

  it('anonymous tokens read the directory and nothing else', async () => {
    const anon = await client.anonymousToken(s.creds.user_client_id);
    expect(anon).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String), expires_in: expect.any(Number) });
    const browser = createCarebookClient({ baseUrl: s.baseUrl, token: staticToken(anon.access_token) });
    const sp = await unwrap(browser.api.GET('/v1/specialties', { params: { query: { page_size: 1 } } }));
    expect(sp.data).toHaveLength(1);
    const err = await unwrap(browser.api.GET('/v1/appointments')).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 403 });
  });
});
