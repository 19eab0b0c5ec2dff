/**
 * The OWASP API Security Top 10 (2023), one describe per item, against the real app (issue #6 §4).
 */
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { book, createBody, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from '../appointments/fixtures.js';
import { multipart, PDF } from '../attachments/files.js';
import { newDeveloper, testApp, testPort } from '../helpers/app.js';
import { anonymousToken, bearer, clientToken, userToken } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { scaled } from '../helpers/scale.js';

const admin = { authorization: 'Bearer test-admin-token-0123456789abcdefgh' };
const ok = (status: number) => status === 200 || status === 201;

/** Every key anywhere in a JSON value. */
function keysOf(v: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(v)) for (const x of v) keysOf(x, out);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.add(k);
      keysOf(x, out);
    }
  }
  return out;
}

function expectErrorBody(res: { statusCode: number; headers: Record<string, unknown>; json(): unknown; body: string }, status: number): void {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as { request_id: string; error_type: string; errors: { message: string }[] };
  expect(body.request_id).toBe(res.headers['x-request-id']);
  expect(['api_error', 'invalid_request']).toContain(body.error_type);
  expect(body.errors.length).toBeGreaterThan(0);
}

describe(`OWASP API Security Top 10 (2023) (${engineName})`, () => {
  let e: SchedulingEnv;
  let day: { start_time: string }[];
  let slotIndex = 0;
  /** The next free New York slot (each test books its own). */
  const nextSlot = () => day[slotIndex++]!.start_time;

  beforeAll(async () => {
    e = await schedulingEnv();
    day = [...(await slots(e, PL.ny, { start: nyDate(4), end: nyDate(4) })), ...(await slots(e, PL.ny, { start: nyDate(5), end: nyDate(5) }))];
    expect(day.length).toBeGreaterThan(20);
  }, scaled(120_000));
  afterAll(async () => e.close());

  describe('API1 broken object-level authorisation', () => {
    it("another developer cannot read, list, change, or attach to a developer's appointment; nor download its attachments", async () => {
      const booked = await book(e, PL.ny, nextSlot());
      expect(ok(booked.statusCode), booked.body).toBe(true);
      const id = booked.json().data.appointment_id as string;
      const m = multipart({ attachment_type: 'community_care_packet' }, [{ name: 'attachment', filename: 'a.pdf', contentType: 'application/pdf', content: PDF }]);
      const up = await e.t.app.inject({ method: 'POST', url: `/v1/appointments/${id}/attachments`, headers: { ...bearer(e.token), 'content-type': m.contentType }, payload: m.body });
      expect(up.statusCode, up.body).toBe(200);
      const attachmentUrl = new URL(up.json().data.attachments[0].attachment_url as string);
      expect((await e.t.app.inject({ url: attachmentUrl.pathname, headers: bearer(e.token) })).statusCode).toBe(200);

      const other = bearer(e.otherToken);
      expectErrorBody(await e.t.app.inject({ url: `/v1/appointments/${id}`, headers: other }), 404);
      expectErrorBody(await e.t.app.inject({ url: `/v1/appointments/${id}/participants`, headers: other }), 404);
      expectErrorBody(await e.t.app.inject({ url: attachmentUrl.pathname, headers: other }), 404);
      const list = await e.t.app.inject({ url: '/v1/appointments?page_size=100', headers: other });
      expect(list.statusCode).toBe(200);
      expect(JSON.stringify(list.json())).not.toContain(id);
      for (const [method, path, payload] of [
        ['POST', 'confirm', { appointment_id: id }],
        ['POST', 'cancel', { appointment_id: id, cancellation_reason_type: 'other_patient_reason', cancellation_reason: 'x' }],
        ['POST', 'reschedule', { appointment_id: id, start_time: nextSlot() }],
        ['PUT', 'update-status', { appointment_id: id, appointment_status: 'arrived' }],
      ] as const) {
        const res = await e.t.app.inject({ method, url: `/v1/appointments/${path}`, headers: other, payload });
        expect(res.statusCode, `${path}: ${res.body}`).toBe(404);
      }
      const m2 = multipart({ attachment_type: 'community_care_packet' }, [{ name: 'attachment', filename: 'a.pdf', contentType: 'application/pdf', content: PDF }]);
      const up2 = await e.t.app.inject({ method: 'POST', url: `/v1/appointments/${id}/attachments`, headers: { ...other, 'content-type': m2.contentType }, payload: m2.body });
      expect(up2.statusCode).toBe(404);
      // Still untouched for its owner.
      expect((await e.t.app.inject({ url: `/v1/appointments/${id}`, headers: bearer(e.token) })).json().data.appointment_status).toBe('pending_booking');
    });

    it("a user's appointment is visible to that user only: not to another user, nor to the developer's machine credential", async () => {
      const alice = await userToken(e.t, e.dev, { email: 'alice@example.org', password: 'correct horse battery staple' });
      const bob = await userToken(e.t, e.dev, { email: 'bob@example.org', password: 'correct horse battery staple' });
      const booked = await e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(alice), payload: createBody(PL.ny, nextSlot()) });
      expect(ok(booked.statusCode), booked.body).toBe(true);
      const id = booked.json().data.appointment_id as string;
      expect((await e.t.app.inject({ url: `/v1/appointments/${id}`, headers: bearer(alice) })).statusCode).toBe(200);
      expectErrorBody(await e.t.app.inject({ url: `/v1/appointments/${id}`, headers: bearer(bob) }), 404);
      expectErrorBody(await e.t.app.inject({ url: `/v1/appointments/${id}`, headers: bearer(e.token) }), 404);
      const bobList = await e.t.app.inject({ url: '/v1/appointments', headers: bearer(bob) });
      expect(JSON.stringify(bobList.json())).not.toContain(id);
      expect((await e.t.app.inject({ method: 'POST', url: '/v1/appointments/cancel', headers: bearer(bob), payload: { appointment_id: id } })).statusCode).toBe(404);
    });

    it("calendars: another developer's machine token, a patient, and another provider cannot read or replace a provider's calendar", async () => {
      const date = nyDate(6);
      const url = `/v1/providers/pr_phx/calendar/timeslots?date=${date}`;
      expect((await e.t.app.inject({ url, headers: bearer(e.token) })).statusCode).toBe(200);
      const patient = await userToken(e.t, e.dev, { email: 'pat@example.org', password: 'correct horse battery staple' });
      const otherProvider = await userToken(e.t, e.dev, { email: 'doc-ny@example.org', password: 'correct horse battery staple', role: 'provider', providerId: 'pr_ny' });
      for (const token of [e.otherToken, patient, otherProvider]) {
        const read = await e.t.app.inject({ url, headers: bearer(token) });
        expect([403, 404], read.body).toContain(read.statusCode);
        const write = await e.t.app.inject({ method: 'PUT', url, headers: bearer(token), payload: { timeslots: [] } });
        expect([403, 404], write.body).toContain(write.statusCode);
      }
    });
  });

  describe('API2 broken authentication', () => {
    it('refuses missing, malformed, tampered, unsigned and foreign-environment tokens with 401 and WWW-Authenticate', async () => {
      const [h, p] = e.token.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
      const forged = Buffer.from(JSON.stringify({ ...claims, dev: e.other.developer_id })).toString('base64url');
      const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${p}.`;
      const prod = await testApp({ APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.org' });
      try {
        const prodDev = await newDeveloper(prod);
        const prodToken = await clientToken(prod, prodDev);
        for (const headers of [{}, { authorization: 'Bearer' }, { authorization: 'Basic Zm9vOmJhcg==' }, bearer('not.a.jwt'), bearer(`${h}.${forged}.${e.token.split('.')[2]}`), bearer(none), bearer(prodToken)]) {
          const res = await e.t.app.inject({ url: '/v1/appointments', headers });
          expectErrorBody(res, 401);
          expect(String(res.headers['www-authenticate'])).toMatch(/^Bearer/);
        }
        // Authentication comes first: without a valid token the body is neither read nor validated.
        const invalidBody = await e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: { 'content-type': 'application/json' }, payload: '{"broken":' });
        expectErrorBody(invalidBody, 401);
        expectErrorBody(await e.t.app.inject({ url: '/v1/appointments?page_size=abc' }), 401);
        // And the sandbox's token is refused by production.
        expectErrorBody(await prod.app.inject({ url: '/v1/appointments', headers: bearer(e.token) }), 401);
      } finally {
        await prod.close();
      }
    });

    it('the token endpoint refuses a wrong secret (invalid_client, 401), a wrong audience, and does not say which part was wrong', async () => {
      const token = (client_secret: string, audience = e.t.config.audience, client_id = e.dev.client_id) =>
        e.t.app.inject({ method: 'POST', url: '/auth/oauth/token', payload: { grant_type: 'client_credentials', client_id, client_secret, audience } });
      const wrong = await token('wrong-secret');
      const unknown = await token('wrong-secret', e.t.config.audience, 'cl_does_not_exist');
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json().error).toBe('invalid_client');
      expect(unknown.statusCode).toBe(401);
      expect(unknown.json()).toEqual(wrong.json());
      expect((await token(e.dev.client_secret, 'https://elsewhere.example/')).statusCode).toBe(400);
      expect(JSON.stringify(wrong.json())).not.toContain(e.dev.client_secret);
    });

    it('a rotated client secret stops working at once', async () => {
      const dev = await newDeveloper(e.t, 'Rotating dev');
      const tok = await clientToken(e.t, dev, 'external.credential.rotate');
      const rotated = await e.t.app.inject({ method: 'POST', url: '/v1/credentials/rotate', headers: bearer(tok), payload: { application_client_id: dev.client_id } });
      expect(rotated.statusCode, rotated.body).toBe(200);
      await expect(clientToken(e.t, dev)).rejects.toThrow(/401/);
      expect(await clientToken(e.t, { ...dev, client_secret: rotated.json().data.client_secret })).toBeTruthy();
    });
  });

  describe('API3 broken object property-level authorisation', () => {
    it('mass assignment: status, developer, ids and timestamps in a create body are ignored', async () => {
      const body = createBody(PL.ny, nextSlot());
      const payload = {
        ...body,
        appointment_status: 'confirmed',
        developer_id: e.other.developer_id,
        data: { ...body.data, appointment_status: 'confirmed', appointment_id: 'ap_chosen', developer_id: e.other.developer_id, env: 'production', created_time_utc: '2000-01-01T00:00:00Z', confirmation_type: 'auto', is_provider_resource: true },
      };
      const res = await e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(e.token), payload });
      expect(ok(res.statusCode), res.body).toBe(true);
      const data = res.json().data;
      expect(data.appointment_status).toBe('pending_booking');
      expect(data.appointment_id).not.toBe('ap_chosen');
      const row = await e.t.db.selectFrom('appointments').selectAll().where('id', '=', data.appointment_id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ developer_id: e.dev.developer_id, env: 'sandbox' });
      expectErrorBody(await e.t.app.inject({ url: `/v1/appointments/${data.appointment_id}`, headers: bearer(e.otherToken) }), 404);
    });

    it('responses carry no secrets, hashes or internal columns, and patient data only where the spec puts it', async () => {
      const booked = await book(e, PL.ny, nextSlot());
      const id = booked.json().data.appointment_id as string;
      const responses = [
        booked,
        await e.t.app.inject({ url: `/v1/appointments/${id}`, headers: bearer(e.token) }),
        await e.t.app.inject({ url: '/v1/appointments?page_size=100', headers: bearer(e.token) }),
        await e.t.app.inject({ url: `/v1/appointments/${id}/participants`, headers: bearer(e.token) }),
        await e.t.app.inject({ url: `/v1/provider_locations/${encodeURIComponent(PL.ny)}`, headers: bearer(e.token) }),
        await e.t.app.inject({ url: '/v1/providers?npis=1234567893', headers: bearer(e.token) }),
      ];
      for (const res of responses) {
        expect(ok(res.statusCode), res.body).toBe(true);
        const keys = [...keysOf(res.json())];
        expect(keys.filter((k) => /secret|hash|password|salt|private|^env$|^developer_id$|^user_id$|token/i.test(k)), res.body).toEqual([]);
      }
      // Patient fields appear only in participants (docs/api/appointments.md#participants), never in appointment records.
      for (const res of responses.slice(0, 3)) {
        const text = res.body;
        for (const v of ['Lovelace', '1990-05-17', 'ada@example.org', '2125550123']) expect(text).not.toContain(v);
      }
      expect(responses[3]!.json().data.patient).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace' });
    });
  });

  describe('API4 unrestricted resource consumption', () => {
    it('caps body size (413), page sizes (400) and the appointment pagination window', async () => {
      const huge = JSON.stringify({ ...createBody(PL.ny, nextSlot()), padding: 'x'.repeat(2 * 1024 * 1024) });
      expectErrorBody(await e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: { ...bearer(e.token), 'content-type': 'application/json' }, payload: huge }), 413);
      for (const url of ['/v1/appointments?page_size=101', '/v1/appointments?page=11', '/v1/specialties?page_size=501', '/v1/schedulable_entities?page_size=10001', '/v1/reference/npi?page_size=60001', `/v1/providers?npis=${Array.from({ length: 51 }, (_, i) => String(1000000000 + i)).join(',')}`]) {
        expectErrorBody(await e.t.app.inject({ url, headers: bearer(e.token) }), 400);
      }
    });

    it('limits requests per credential: 429 with the error body, Retry-After and RateLimit headers', async () => {
      const t = await testApp({ RATE_LIMIT_PER_MINUTE: '5' });
      try {
        const dev = await newDeveloper(t);
        const token = await clientToken(t, dev);
        const statuses: number[] = [];
        let last;
        for (let i = 0; i < 8; i++) {
          last = await t.app.inject({ url: '/v1/specialties', headers: bearer(token) });
          statuses.push(last.statusCode);
        }
        expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
        expectErrorBody(last!, 429);
        expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
        expect(last!.headers['ratelimit-limit']).toBe('5');
        expect(last!.headers['ratelimit-remaining']).toBe('0');
        // Malformed and invalid requests count too (they cannot be used to probe without limit).
        const other = await clientToken(t, await newDeveloper(t, 'Prober'));
        const probes: number[] = [];
        for (let i = 0; i < 8; i++) {
          probes.push((await t.app.inject({ method: 'POST', url: '/v1/appointments', headers: { ...bearer(other), 'content-type': 'application/json' }, payload: '{"broken":' })).statusCode);
        }
        expect(probes.slice(0, 5)).toEqual([400, 400, 400, 400, 400]);
        expect(probes.slice(5)).toEqual([429, 429, 429]);
      } finally {
        await t.close();
      }
    });

    it('caps the attachment size at 10 MB', async () => {
      const booked = await book(e, PL.ny, nextSlot());
      const id = booked.json().data.appointment_id as string;
      const big = Buffer.concat([PDF, Buffer.alloc(10 * 1024 * 1024 + 10, 32)]);
      const m = multipart({ attachment_type: 'community_care_packet' }, [{ name: 'attachment', filename: 'a.pdf', contentType: 'application/pdf', content: big }]);
      const res = await e.t.app.inject({ method: 'POST', url: `/v1/appointments/${id}/attachments`, headers: { ...bearer(e.token), 'content-type': m.contentType }, payload: m.body });
      expectErrorBody(res, 400);
    });
  });

  describe('API5 broken function-level authorisation', () => {
    it('admin API: 401 without or with a wrong token, or with a developer token; 404 when ADMIN_TOKEN is unset', async () => {
      const bodies = { name: 'Mallory' };
      for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: 'Bearer test-admin-token-0123456789abcdefghx' }, { authorization: 'Basic test-admin-token-0123456789abcdefgh' }, bearer(e.token)]) {
        const res = await e.t.app.inject({ method: 'POST', url: '/admin/v1/developers', headers, payload: bodies });
        expect(res.statusCode, res.body).toBe(401);
      }
      expect((await e.t.app.inject({ method: 'POST', url: '/admin/v1/developers', headers: admin, payload: bodies })).statusCode).toBe(201);
      const off = await testApp({ ADMIN_TOKEN: '' });
      try {
        expect(off.config.adminToken).toBeUndefined();
        for (const headers of [{}, admin, { authorization: 'Bearer ' }]) {
          expect((await off.app.inject({ method: 'POST', url: '/admin/v1/developers', headers, payload: bodies })).statusCode).toBe(404);
        }
        const doc = JSON.stringify(off.app.swagger());
        expect(doc).not.toContain('/admin/v1');
      } finally {
        await off.close();
      }
    });

    it('scopes: a token without the needed scope gets 403; anonymous tokens read the directory only', async () => {
      const readOnly = await clientToken(e.t, e.dev, 'external.appointment.read');
      expectErrorBody(await e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(readOnly), payload: createBody(PL.ny, nextSlot()) }), 403);
      expect((await e.t.app.inject({ url: '/v1/appointments', headers: bearer(readOnly) })).statusCode).toBe(200);
      const writeOnly = await clientToken(e.t, e.dev, 'external.appointment.write');
      expectErrorBody(await e.t.app.inject({ url: '/v1/appointments', headers: bearer(writeOnly) }), 403);
      expectErrorBody(await e.t.app.inject({ method: 'POST', url: '/v1/credentials/rotate', headers: bearer(readOnly), payload: { application_client_id: e.dev.client_id } }), 403);
      const anon = await anonymousToken(e.t, e.dev);
      expect((await e.t.app.inject({ url: `/v1/provider_locations/${encodeURIComponent(PL.ny)}`, headers: bearer(anon) })).statusCode).toBe(200);
      for (const [method, url] of [['GET', '/v1/appointments'], ['POST', '/v1/appointments'], ['GET', '/v1/schedulable_entities'], ['POST', '/v1/token/anonymous-user'], ['GET', `/v1/providers/pr_ny/calendar/timeslots?date=${nyDate(6)}`]] as const) {
        const res = await e.t.app.inject({ method, url, headers: bearer(anon), ...(method === 'POST' ? { payload: {} } : {}) });
        expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(403);
      }
      // A developer cannot rotate another developer's client secret.
      const rotator = await clientToken(e.t, e.dev, 'external.credential.rotate');
      const res = await e.t.app.inject({ method: 'POST', url: '/v1/credentials/rotate', headers: bearer(rotator), payload: { application_client_id: e.other.client_id } });
      expect([400, 403, 404], res.body).toContain(res.statusCode);
      expect(await clientToken(e.t, e.other)).toBeTruthy();
    });
  });

  describe('API6 unrestricted access to sensitive business flows', () => {
    it('a slot is booked once: a repeat with the same Idempotency-Key returns the first answer; a second booking of the slot is 409', async () => {
      const start = nextSlot();
      const key = randomBytes(8).toString('hex');
      const send = (headers: Record<string, string>, patient = {}) =>
        e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: { ...bearer(e.token), ...headers }, payload: createBody(PL.ny, start, {}, patient) });
      const first = await send({ 'idempotency-key': key });
      const again = await send({ 'idempotency-key': key });
      expect(ok(first.statusCode)).toBe(true);
      expect(again.json().data.appointment_id).toBe(first.json().data.appointment_id);
      expect((await send({ 'idempotency-key': key }, { first_name: 'Other' })).statusCode).toBe(409);
      expect((await send({})).statusCode).toBe(409);
      const rows = await e.t.db.selectFrom('appointments').select('id').where('developer_id', '=', e.dev.developer_id).where('start_time', '=', new Date(start)).execute();
      expect(rows).toHaveLength(1);
    });

    it('bulk booking by one credential is throttled by the per-credential rate limit', async () => {
      const t = await testApp({ RATE_LIMIT_PER_MINUTE: '10' });
      try {
        const dev = await newDeveloper(t);
        const token = await clientToken(t, dev);
        const statuses = await Promise.all(
          Array.from({ length: 20 }, (_, i) => t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(token), payload: createBody(PL.ny, `${nyDate(7)}T${String(8 + (i % 10)).padStart(2, '0')}:00:00-04:00`) }).then((r) => r.statusCode)),
        );
        expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(10);
      } finally {
        await t.close();
      }
    });
  });

  describe('API7 server-side request forgery', () => {
    it('webhook targets: cloud metadata, link-local, unspecified and multicast addresses are refused; production refuses loopback, private and plain http', async () => {
      const key = randomBytes(32).toString('base64');
      for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/', 'http://0.0.0.0/', 'http://224.0.0.1/', 'http://[::ffff:169.254.169.254]/', 'file:///etc/passwd', 'gopher://127.0.0.1/', 'http://user:pass@example.org/']) {
        const res = await e.t.app.inject({ method: 'POST', url: '/v1/webhook/mock-request', headers: bearer(e.token), payload: { webhook_url: url, webhook_key: key } });
        expect(res.statusCode, `${url}: ${res.body}`).toBe(400);
        const set = await e.t.app.inject({ method: 'PUT', url: `/admin/v1/developers/${e.dev.developer_id}/webhook`, headers: admin, payload: { url, key } });
        expect(set.statusCode, `${url}: ${set.body}`).toBe(400);
      }
      const prod = await testApp({ APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.org' });
      try {
        const dev = await newDeveloper(prod);
        for (const url of ['http://127.0.0.1:9/hook', 'https://127.0.0.1/hook', 'https://10.0.0.5/hook', 'https://[::1]/hook', 'http://example.org/hook', 'https://192.168.1.1/']) {
          const set = await prod.app.inject({ method: 'PUT', url: `/admin/v1/developers/${dev.developer_id}/webhook`, headers: admin, payload: { url, key } });
          expect(set.statusCode, `${url}: ${set.body}`).toBe(400);
        }
      } finally {
        await prod.close();
      }
    });

    it('a receiver that redirects to the metadata address is not followed', async () => {
      let hits = 0;
      const port = testPort();
      const server = createServer((_req, res) => {
        hits++;
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      });
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
      try {
        const res = await e.t.app.inject({ method: 'POST', url: '/v1/webhook/mock-request', headers: bearer(e.token), payload: { webhook_url: `http://127.0.0.1:${port}/hook`, webhook_key: randomBytes(32).toString('base64') } });
        expect(res.statusCode).toBe(200);
        // A loopback receiver's answer is never reported back (the outbound policy).
        expect(res.headers['webhook-delivery-status']).toBeUndefined();
        expect(hits).toBe(1);
      } finally {
        await new Promise((r) => server.close(r));
      }
    });
  });

  describe('API8 security misconfiguration', () => {
    it('security headers on API responses; no wildcard CORS on /v1; no stack traces or framework details in errors', async () => {
      const res = await e.t.app.inject({ url: '/v1/appointments', headers: { ...bearer(e.token), origin: 'https://evil.example' } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['x-powered-by']).toBeUndefined();
      const preflight = await e.t.app.inject({ method: 'OPTIONS', url: '/v1/appointments', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(preflight.headers['access-control-allow-origin']).not.toBe('*');
      expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
      for (const bad of [
        await e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: { ...bearer(e.token), 'content-type': 'application/json' }, payload: '{"a":' }),
        await e.t.app.inject({ url: '/v1/nothing-here', headers: bearer(e.token) }),
        await e.t.app.inject({ url: '/v1/appointments?page_size=abc', headers: bearer(e.token) }),
      ]) {
        expect(bad.statusCode).toBeLessThan(500);
        expect(bad.body).not.toMatch(/at .*\.(ts|js):\d+|node_modules|FST_|stack/);
      }
    });

    it('the sign-in page forbids framing and sets a content security policy', async () => {
      const verifier = randomBytes(32).toString('base64url');
      const { createHash } = await import('node:crypto');
      const q = new URLSearchParams({ response_type: 'code', client_id: e.dev.user_client_id, redirect_uri: 'http://127.0.0.1:9/callback', scope: 'external.appointment.read', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', state: 's' });
      const page = await e.t.app.inject({ url: `/auth/authorize?${q}` });
      expect(page.statusCode).toBe(200);
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(String(page.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
    });
  });

  describe('API9 improper inventory management', () => {
    it('sandbox-only operations are closed in production, and not listed there; /v1-beta is labelled beta', async () => {
      const prod = await testApp({ APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.org' });
      try {
        const dev = await newDeveloper(prod);
        const token = await clientToken(prod, dev);
        const res = await prod.app.inject({ method: 'POST', url: '/v1/webhook/mock-request', headers: bearer(token), payload: { webhook_url: 'https://example.org/hook', webhook_key: randomBytes(32).toString('base64') } });
        expectErrorBody(res, 404);
        const doc = prod.app.swagger() as { paths: Record<string, Record<string, { tags?: string[] }>> };
        expect(Object.keys(doc.paths)).not.toContain('/v1/webhook/mock-request');
        const sandboxDoc = e.t.app.swagger() as typeof doc;
        expect(Object.keys(sandboxDoc.paths)).toContain('/v1/webhook/mock-request');
        for (const [path, ops] of Object.entries(sandboxDoc.paths).filter(([p]) => p.startsWith('/v1-beta/'))) {
          for (const op of Object.values(ops)) expect(op.tags?.join(' '), path).toMatch(/beta/i);
        }
        expect(Object.keys(sandboxDoc.paths).some((p) => p.startsWith('/v1-beta/'))).toBe(true);
      } finally {
        await prod.close();
      }
    });
  });

  describe('API10 unsafe consumption of APIs', () => {
    it("a receiver's response body and headers are never reflected to the caller", async () => {
      const port = testPort();
      const server = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'evil=1', 'x-evil': 'yes' }).end('{"injected":"<script>alert(1)</script>","appointment_id":"ap_evil"}');
      });
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
      try {
        const res = await e.t.app.inject({ method: 'POST', url: '/v1/webhook/mock-request', headers: bearer(e.token), payload: { webhook_url: `http://127.0.0.1:${port}/hook`, webhook_key: randomBytes(32).toString('base64') } });
        expect(res.statusCode).toBe(200);
        expect(res.body).not.toContain('injected');
        expect(res.body).not.toContain('ap_evil');
        expect(res.headers['set-cookie']).toBeUndefined();
        expect(res.headers['x-evil']).toBeUndefined();
        expect(res.headers['webhook-delivery-status']).toBeUndefined();
      } finally {
        await new Promise((r) => server.close(r));
      }
    });
  });
});
