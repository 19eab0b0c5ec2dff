/**
 * PKCE helpers and user-token refresh against the real auth server; the webhook verifier against
 * real signed deliveries from the sandbox's mock webhook; retries against a server answering 429/503.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../../src/domain/users/create-user.js';
import { authPath, authorizeWithForms } from '../../../test/helpers/auth.js';
import { testPort } from '../../../test/helpers/app.js';
import {
  codeChallenge,
  createCarebookClient,
  createCodeVerifier,
  exchangeCode,
  parseCallback,
  retryAfterMs,
  startAuthorization,
  unwrap,
  userTokenFetch,
  UserTokenSource,
  verifyWebhook,
  WebhookVerificationError,
  withRetries,
} from '../src/index.js';
import { startProxy } from './proxy.js';
import { startService, type Service } from './service.js';

function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const port = testPort();
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${port}` })));
}

describe('PKCE, user tokens and webhooks against the service', () => {
  let s: Service;
  beforeAll(async () => {
    s = await startService({ providers: 5 });
  });
  afterAll(async () => s?.close());

  it('verifier and challenge follow RFC 7636 S256', async () => {
    const v = createCodeVerifier();
    expect(v).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await codeChallenge(v)).toBe(createHash('sha256').update(v).digest('base64url'));
    expect(createCodeVerifier()).not.toBe(v);
  });

  it('the authorize URL opens the sign-in page; the code exchanges; the refresh token rotates', async () => {
    const redirectUri = `${s.baseUrl}/demo/callback`;
    const start = await startAuthorization({
      authUrl: s.t.config.authUrl,
      clientId: s.creds.user_client_id,
      redirectUri,
      scope: 'external.appointment.read external.appointment.write offline_access',
      audience: 'DeveloperApiPatient-Sandbox',
      loginHint: 'pat@example.com',
    });
    const page = await fetch(start.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('pat@example.com');

    // Sign in with the forms (as a browser would) for our verifier, then exchange with our helper.
    await createUser(s.t.db, { env: 'sandbox', email: 'pat@example.com', password: 'pat-password-1', role: 'patient', providerId: null });
    const { code, location } = await authorizeWithForms(
      s.t,
      s.creds,
      { email: 'pat@example.com', password: 'pat-password-1', scope: 'external.appointment.read external.appointment.write offline_access', redirectUri, state: start.state },
      start.verifier,
    );
    expect(parseCallback(location, start.state)).toBe(code);
    expect(() => parseCallback(location, 'other-state')).toThrow(/state/);

    const tokenUrl = `${s.baseUrl}${authPath(s.t)}/oauth/token`;
    const tokens = await exchangeCode({ tokenUrl, clientId: s.creds.user_client_id, code, redirectUri, verifier: start.verifier });
    expect(tokens.refresh_token).toEqual(expect.any(String));

    let now = Date.now();
    const refreshed: string[] = [];
    const user = new UserTokenSource({ tokenUrl, clientId: s.creds.user_client_id, initial: tokens, now: () => now, onRefresh: (t) => void refreshed.push(t.refresh_token!) });
    const client = createCarebookClient({ baseUrl: s.baseUrl, token: user });
    expect((await unwrap(client.api.GET('/v1/appointments'))).data).toEqual([]);
    expect(refreshed).toHaveLength(0);
    now += 3600_000; // the access token is due: the next call refreshes it first
    expect((await unwrap(client.api.GET('/v1/appointments'))).total_count).toBe(0);
    expect(refreshed).toHaveLength(1);
    expect(user.refreshToken).toBe(refreshed[0]);
    expect(user.refreshToken).not.toBe(tokens.refresh_token);
  });

  it('the code exchange and the refresh are retried on 429/503 answers through a proxy; network failures are not', async () => {
    const redirectUri = `${s.baseUrl}/demo/callback`;
    const start = await startAuthorization({
      authUrl: s.t.config.authUrl,
      clientId: s.creds.user_client_id,
      redirectUri,
      scope: 'external.appointment.read offline_access',
      audience: 'DeveloperApiPatient-Sandbox',
    });
    await createUser(s.t.db, { env: 'sandbox', email: 'retry@example.com', password: 'retry-password-1', role: 'patient', providerId: null });
    const { code } = await authorizeWithForms(
      s.t,
      s.creds,
      { email: 'retry@example.com', password: 'retry-password-1', scope: 'external.appointment.read offline_access', redirectUri, state: start.state },
      start.verifier,
    );
    const plan = [{ status: 429, headers: { 'retry-after': '0' } }, undefined, { status: 503, headers: { 'retry-after': '0' } }];
    const tokenPath = `${authPath(s.t)}/oauth/token`;
    const proxy = await startProxy(s.baseUrl, (path) => (path.startsWith(tokenPath) ? plan.shift() : undefined));
    try {
      const tokenUrl = `${proxy.url}${tokenPath}`;
      const tokens = await exchangeCode({ tokenUrl, clientId: s.creds.user_client_id, code, redirectUri, verifier: start.verifier, retry: { baseDelayMs: 10 } });
      expect(tokens.refresh_token).toEqual(expect.any(String));
      const user = new UserTokenSource({ tokenUrl, clientId: s.creds.user_client_id, initial: tokens, retry: { baseDelayMs: 10 } });
      const access = await user.refresh();
      expect(access).not.toBe(tokens.access_token);
      expect(user.refreshToken).not.toBe(tokens.refresh_token);
      // 429 then the exchange; 503 then the refresh: each single-use credential was spent once.
      expect(proxy.seen.filter((x) => x.path.startsWith(tokenPath)).map((x) => x.status)).toEqual([429, 200, 503, 200]);
    } finally {
      await proxy.close();
    }

    // No answer at all: the request may have spent the code or token, so it is not sent again.
    let calls = 0;
    const broken = userTokenFetch(async () => {
      calls++;
      throw new TypeError('fetch failed');
    }, { baseDelayMs: 1 });
    await expect(broken('http://127.0.0.1:1/auth/oauth/token', { method: 'POST', body: '{}' })).rejects.toThrow('fetch failed');
    expect(calls).toBe(1);
    // A 503 answer is retried as often as the policy says.
    let answers = 0;
    const busy = userTokenFetch(async () => {
      answers++;
      return new Response('{}', { status: 503, headers: { 'retry-after': '0' } });
    }, { retries: 2 });
    expect((await busy('http://127.0.0.1:1/auth/oauth/token', { method: 'POST', body: '{}' })).status).toBe(503);
    expect(answers).toBe(3);
  });

  it('verifies real deliveries of the mock webhook; refuses tampering, old timestamps and wrong keys', async () => {
    const got: { raw: string; headers: IncomingHttpHeaders }[] = [];
    const receiver = await listen((req, res) => {
      let raw = '';
      req.on('data', (d) => (raw += String(d)));
      req.on('end', () => {
        got.push({ raw, headers: req.headers });
        res.writeHead(204).end();
      });
    });
    try {
      const key = Buffer.from('quickstart-webhook-key-0123456789').toString('base64');
      const client = createCarebookClient({ baseUrl: s.baseUrl, clientCredentials: { clientId: s.creds.client_id, clientSecret: s.creds.client_secret } });
      await unwrap(client.api.POST('/v1/webhook/mock-request', { body: { webhook_url: `${receiver.url}/hook`, webhook_key: key, appointment_update_type: 'cancelled' } }));
      expect(got).toHaveLength(1);
      const { raw, headers } = got[0]!;
      const event = await verifyWebhook({ rawBody: raw, headers, key });
      expect(event).toMatchObject({ event_type: 'appointment_updated', data: { appointment_data: { appointment_update_type: 'cancelled' } } });

      // Bytes, a Headers object, and a key list while rotating.
      const otherKey = Buffer.from('another-key').toString('base64');
      const h = new Headers(Object.entries(headers).map(([k, v]) => [k, String(v)] as [string, string]));
      await expect(verifyWebhook({ rawBody: new TextEncoder().encode(raw), headers: h, key: [otherKey, key] })).resolves.toMatchObject({ event_type: 'appointment_updated' });
      // Several signatures, one of which matches.
      const sig = String(headers['webhook-signature']);
      await expect(verifyWebhook({ rawBody: raw, headers: { ...headers, 'webhook-signature': `v1:AAAA;v0:xyz;${sig}` }, key })).resolves.toBeTruthy();

      const refuse = (opts: Partial<Parameters<typeof verifyWebhook>[0]>) => expect(verifyWebhook({ rawBody: raw, headers, key, ...opts })).rejects.toBeInstanceOf(WebhookVerificationError);
      await refuse({ rawBody: raw.replace('cancelled', 'created') });
      await refuse({ key: otherKey });
      await refuse({ now: (Number(headers['webhook-timestamp']) + 301) * 1000 });
      await refuse({ now: (Number(headers['webhook-timestamp']) - 301) * 1000 });
      await refuse({ headers: { ...headers, 'webhook-signature': 'v1:AAAA' } });
      await refuse({ headers: { ...headers, 'webhook-timestamp': undefined } });
      await expect(verifyWebhook({ rawBody: raw, headers, key, now: (Number(headers['webhook-timestamp']) + 600) * 1000, toleranceSeconds: 900 })).resolves.toBeTruthy();
    } finally {
      await new Promise((r) => receiver.server.close(r));
    }
  });
});

describe('retries', () => {
  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(Date.now() + 5000).toUTCString(), Date.now())).toBeGreaterThan(3000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
  });

  it('waits as long as Retry-After says on 429 and 503, resends the same body and Idempotency-Key', async () => {
    const plan = [
      [429, { 'retry-after': '1' }],
      [503, { 'retry-after': '0' }],
      [200, {}],
    ] as const;
    const seen: { key: string | undefined; body: string; at: number }[] = [];
    const { server, url } = await listen((req, res) => {
      let body = '';
      req.on('data', (d) => (body += String(d)));
      req.on('end', () => {
        seen.push({ key: req.headers['idempotency-key'] as string | undefined, body, at: Date.now() });
        const [status, headers] = plan[seen.length - 1] ?? [200, {}];
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ request_id: 'r', data: { ok: seen.length } }));
      });
    });
    try {
      const client = createCarebookClient({ baseUrl: url, token: 't', retry: { baseDelayMs: 10 } });
      const res = await client.api.POST('/v1/appointments/confirm', { body: { appointment_id: 'a1' } });
      expect(res.response.status).toBe(200);
      expect(seen).toHaveLength(3);
      expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
      expect(new Set(seen.map((x) => x.key)).size).toBe(1);
      expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen.every((x) => x.body === '{"appointment_id":"a1"}')).toBe(true);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('gives up after the configured attempts and returns the last answer', async () => {
    const slept: number[] = [];
    const send = withRetries(async () => new Response('busy', { status: 503, headers: { 'retry-after': '2' } }), {
      retries: 2,
      sleep: async (ms) => void slept.push(ms),
    });
    const res = await send(new Request('http://x.invalid/'));
    expect(res.status).toBe(503);
    expect(slept).toEqual([2000, 2000]);
  });

  it('retries network failures with backoff', async () => {
    let calls = 0;
    const send = withRetries(
      async () => {
        calls += 1;
        if (calls < 3) throw new TypeError('fetch failed');
        return new Response('{}', { status: 200 });
      },
      { sleep: async () => undefined },
    );
    expect((await send(new Request('http://x.invalid/', { method: 'POST', body: '{}' }))).status).toBe(200);
    expect(calls).toBe(3);
  });
});
