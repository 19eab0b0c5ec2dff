import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { createServer } from 'node:http';
import { isRetryable, sendWebhook, WEBHOOK_TIMEOUT_MS } from '../../src/webhooks/send.js';
import { testPort } from '../helpers/app.js';
import { checkUrl, classifyAddress, policyFor } from '../../src/webhooks/target-policy.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';
import { startReceiver, type Receiver } from './receiver.js';

const admin = { authorization: 'Bearer test-admin-token-0123456789abcdefgh' };

describe('webhook targets: what production and the sandbox may reach', () => {
  it('classifies addresses', () => {
    expect(classifyAddress('169.254.169.254')).toBe('never');
    expect(classifyAddress('fe80::1')).toBe('never');
    expect(classifyAddress('0.0.0.0')).toBe('never');
    expect(classifyAddress('::ffff:169.254.169.254')).toBe('never');
    expect(classifyAddress('127.0.0.1')).toBe('private');
    expect(classifyAddress('10.1.2.3')).toBe('private');
    expect(classifyAddress('172.20.0.1')).toBe('private');
    expect(classifyAddress('192.168.1.1')).toBe('private');
    expect(classifyAddress('::1')).toBe('private');
    expect(classifyAddress('fd00::1')).toBe('private');
    expect(classifyAddress('8.8.8.8')).toBe('public');
  });

  it('production refuses plain http, loopback and private literals; where private targets are allowed only link-local and the like are refused', () => {
    const prod = policyFor('production', false);
    expect(() => checkUrl('http://hooks.example.org/x', prod)).toThrow(/https/);
    expect(() => checkUrl('https://127.0.0.1/x', prod)).toThrow(/private/);
    expect(() => checkUrl('https://[::1]/x', prod)).toThrow(/private/);
    expect(() => checkUrl('https://user:pw@hooks.example.org/x', prod)).toThrow(/credentials/);
    expect(checkUrl('https://hooks.example.org/x', prod).hostname).toBe('hooks.example.org');
    const sandbox = policyFor('sandbox', true);
    expect(checkUrl('http://127.0.0.1:9/x', sandbox).port).toBe('9');
    expect(() => checkUrl('http://169.254.169.254/latest/meta-data', sandbox)).toThrow(/never allowed/);
    expect(checkUrl('http://127.0.0.1/x', policyFor('production', true)).hostname).toBe('127.0.0.1');
  });

  it('gives up on a receiver that does not answer in time, and counts that as retryable', async () => {
    expect(WEBHOOK_TIMEOUT_MS).toBe(5000);
    const port = testPort();
    const silent = createServer(() => undefined); // accepts, never answers
    await new Promise<void>((r) => silent.listen(port, '127.0.0.1', r));
    try {
      const started = Date.now();
      const res = await sendWebhook(`http://127.0.0.1:${port}/hook`, '{}', {}, policyFor('sandbox', true), 300);
      expect(res.statusCode).toBeNull();
      expect(res.error).toMatch(/timed out/);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(isRetryable(res)).toBe(true);
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });

  it('checks the resolved address at send time: a name that resolves to loopback is refused in production', async () => {
    const rx = await startReceiver([]);
    try {
      const res = await sendWebhook(`https://localhost:${rx.port}/hook`, '{}', {}, policyFor('production', false));
      expect(res.statusCode).toBeNull();
      expect(res.error).toMatch(/not allowed/);
      expect(rx.received).toHaveLength(0);
      const ok = await sendWebhook(`http://localhost:${rx.port}/hook`, '{}', {}, policyFor('sandbox', true));
      expect(ok.statusCode).toBe(200);
    } finally {
      await rx.close();
    }
  });
});

describe('POST /v1/webhook/mock-request (sandbox) and the admin webhook API', () => {
  let t: TestApp;
  let dev: NewDeveloper;
  let token: string;
  let rx: Receiver;
  const k = randomBytes(32).toString('base64');
  beforeAll(async () => {
    t = await testApp();
    dev = await newDeveloper(t);
    token = await clientToken(t, dev);
    rx = await startReceiver([k]);
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  const mock = (payload: unknown, headers = bearer(token)) => t.app.inject({ method: 'POST', url: '/v1/webhook/mock-request', headers, payload: payload as object });

  it('sends one signed example and returns exactly the body it sent, without request_id', async () => {
    const res = await mock({ webhook_url: rx.url, webhook_key: k, appointment_update_type: 'cancelled' });
    expect(res.statusCode).toBe(200);
    // The receiver is on loopback: what it answered is not reported (test/webhooks/outbound-policy.test.ts).
    expect(res.headers['webhook-delivery-status']).toBeUndefined();
    const body = res.json();
    expect(body.request_id).toBeUndefined();
    expect(body).toMatchObject({ event_type: 'appointment_updated', data: { data_type: 'appointment_data', appointment_data: { appointment_update_type: 'cancelled' } } });
    const got = rx.received.at(-1)!;
    // The very bytes the receiver got and verified, not an equivalent re-serialisation.
    expect(res.body).toBe(got.raw);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(got.verifiedWith).toEqual([k]);
  });

  it("the 'updated' example shows patient.uploaded_attachments with its attachment_type, returned as sent", async () => {
    const res = await mock({ webhook_url: rx.url, webhook_key: k, appointment_update_type: 'updated' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(rx.received.at(-1)!.raw);
    expect(res.json().data.appointment_data.changed_attributes).toContainEqual({ attribute_path: 'patient.uploaded_attachments', attachment_type: 'community_care_packet' });
  });

  it('names every bad field: invalid URL and non-base64 key; refuses metadata addresses', async () => {
    const res = await mock({ webhook_url: 'not a url', webhook_key: 'not base64!', appointment_update_type: 'deleted' });
    expect(res.statusCode).toBe(400);
    const fields = res.json().errors.map((e: { field: string }) => e.field);
    expect(fields).toContain('appointment_update_type');
    const res2 = await mock({ webhook_url: 'not a url', webhook_key: 'not base64!' });
    expect(res2.json().errors.map((e: { field: string }) => e.field).sort()).toEqual(['webhook_key', 'webhook_url']);
    const meta = await mock({ webhook_url: 'http://169.254.169.254/latest/meta-data/', webhook_key: k });
    expect(meta.statusCode).toBe(400);
    expect(meta.json().errors[0].field).toBe('webhook_url');
    expect((await mock({ webhook_key: k })).json().errors[0].field).toBe('webhook_url');
  });

  it('needs a token, and does not exist in production', async () => {
    expect((await mock({ webhook_url: rx.url, webhook_key: k }, {} as never)).statusCode).toBe(401);
    const prod = await testApp({ APP_ENV: 'production' });
    try {
      const pdev = await newDeveloper(prod);
      const res = await prod.app.inject({ method: 'POST', url: '/v1/webhook/mock-request', headers: bearer(await clientToken(prod, pdev)), payload: { webhook_url: rx.url, webhook_key: k } });
      expect(res.statusCode).toBe(404);
    } finally {
      await prod.close();
    }
  });

  it('admin: sets a receiver (validated), lists deliveries and replays', async () => {
    const bad = await t.app.inject({ method: 'PUT', url: `/admin/v1/developers/${dev.developer_id}/webhook`, headers: admin, payload: { url: rx.url, key: '***' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].field).toBe('key');
    const missing = await t.app.inject({ method: 'PUT', url: '/admin/v1/developers/dv_nobody/webhook', headers: admin, payload: { url: rx.url, key: k } });
    expect(missing.statusCode).toBe(404);
    const ok = await t.app.inject({ method: 'PUT', url: `/admin/v1/developers/${dev.developer_id}/webhook`, headers: admin, payload: { url: rx.url, key: k } });
    expect(ok.statusCode).toBe(200);
    const list = await t.app.inject({ url: `/admin/v1/webhook-deliveries?developer_id=${dev.developer_id}`, headers: admin });
    expect(list.json()).toEqual({ data: [] });
    const replay = await t.app.inject({ method: 'POST', url: '/admin/v1/webhook-replays', headers: admin, payload: { developer_id: dev.developer_id, since: '2020-01-01T00:00:00Z' } });
    expect(replay.statusCode).toBe(202);
    expect(replay.json()).toEqual({ replayed: 0 });
    expect((await t.app.inject({ url: `/admin/v1/webhook-deliveries?developer_id=${dev.developer_id}` })).statusCode).toBe(401);
  });
});
