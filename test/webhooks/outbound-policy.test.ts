/**
 * One outbound address policy (docs/webhooks.md, "Where webhooks may go"): metadata, link-local,
 * reserved and the like are refused everywhere; private and loopback addresses only where the
 * operator allows them; IPv6 forms that carry an IPv4 address are judged by that address; numeric
 * host spellings are normalised first; and a private receiver's answer is never reported back.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowPrivateTargets, loadConfig } from '../../src/config.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { checkUrl, classifyAddress, policyFor } from '../../src/webhooks/target-policy.js';
import { newDeveloper, testApp, testPort, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';

const KEY = Buffer.alloc(32, 7).toString('base64');

describe('outbound address policy', () => {
  it('classifies addresses, IPv4 carried in IPv6 by the IPv4 address', () => {
    const never = ['169.254.169.254', 'fe80::1', '0.0.0.0', '::', '255.255.255.255', '224.0.0.1', 'ff02::1', 'fd00:ec2::254', '100.100.100.200', '192.0.0.192', '192.0.2.1', '2001:db8::1', '240.0.0.1', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '64:ff9b::a9fe:a9fe', '::a9fe:a9fe', '2002:a9fe:a9fe::1'];
    const priv = ['127.0.0.1', '127.1.2.3', '10.1.2.3', '172.20.0.1', '192.168.1.1', '100.64.0.1', '::1', 'fd00::1', 'fc00::5', '::ffff:127.0.0.1', '64:ff9b::7f00:1', '::7f00:1', '2002:7f00:1::', '2001:0:4136:e378:8000:63bf:80ff:fffe', '64:ff9b:1::7f00:1', '::ffff:10.0.0.1'];
    const pub = ['8.8.8.8', '93.184.216.34', '2606:4700::1111', '64:ff9b::808:808', '::ffff:8.8.8.8'];
    for (const a of never) expect(classifyAddress(a), a).toBe('never');
    for (const a of priv) expect(classifyAddress(a), a).toBe('private');
    for (const a of pub) expect(classifyAddress(a), a).toBe('public');
  });

  it('normalises numeric host spellings before checking them', () => {
    const closed = policyFor('sandbox', false);
    for (const url of ['http://2130706433/', 'http://0177.0.0.1/', 'http://0x7f000001/', 'http://127.1/', 'http://[::ffff:7f00:1]/', 'http://[64:ff9b::7f00:1]/', 'http://[::7f00:1]/']) {
      expect(() => checkUrl(url, closed), url).toThrow(/private or loopback/);
    }
    for (const url of ['http://2852039166/', 'http://0xa9fea9fe/', 'http://[fd00:ec2::254]/', 'http://100.100.100.200/']) {
      expect(() => checkUrl(url, policyFor('sandbox', true)), url).toThrow(/never allowed/);
    }
    expect(() => checkUrl('https://[64:ff9b::7f00:1]/', policyFor('production', false))).toThrow(/private or loopback/);
    expect(() => checkUrl('https://[::7f00:1]/', policyFor('production', false))).toThrow(/private or loopback/);
  });

  it('allows private targets only when the operator says so; unset, only a sandbox on a loopback address', () => {
    expect(allowPrivateTargets(undefined, 'sandbox', '127.0.0.1')).toBe(true);
    expect(allowPrivateTargets(undefined, 'sandbox', '::1')).toBe(true);
    expect(allowPrivateTargets(undefined, 'sandbox', '0.0.0.0')).toBe(false);
    expect(allowPrivateTargets(undefined, 'production', '127.0.0.1')).toBe(false);
    expect(allowPrivateTargets(false, 'sandbox', '127.0.0.1')).toBe(false);
    expect(allowPrivateTargets(true, 'production', '0.0.0.0')).toBe(true);
    expect(() => loadConfig({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'yes' })).toThrow(/ALLOW_PRIVATE_WEBHOOK_TARGETS/);
  });
});

describe('the sandbox mock delivery under the policy', () => {
  let receiver: Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    port = testPort();
    receiver = createServer((req, res) => {
      hits++;
      req.resume();
      res.writeHead(418).end('internal secret');
    });
    await new Promise<void>((r) => receiver.listen(port, '127.0.0.1', r));
  });
  afterAll(async () => new Promise<void>((r) => receiver.close(() => r())));

  async function withSandbox(env: Record<string, string>, fn: (t: TestApp, token: string) => Promise<void>): Promise<void> {
    const t = await testApp(env);
    try {
      const dev: NewDeveloper = await newDeveloper(t, 'Prober');
      await fn(t, await clientToken(t, dev));
    } finally {
      await t.close();
    }
  }
  const mock = (t: TestApp, token: string, webhook_url: string) =>
    t.app.inject({ method: 'POST', url: '/v1/webhook/mock-request', headers: bearer(token), payload: { webhook_url, webhook_key: KEY } });

  it('a sandbox served to others refuses loopback in every spelling and never connects', async () => {
    await withSandbox({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'false' }, async (t, token) => {
      const before = hits;
      for (const host of ['127.0.0.1', '2130706433', '0177.0.0.1', '0x7f000001', 'localhost', '[::1]', '[::ffff:7f00:1]']) {
        const res = await mock(t, token, `http://${host}:${port}/hook`);
        expect(res.statusCode, host).toBe(400);
        expect(res.json()).toMatchObject({ error_type: 'invalid_request', errors: [{ field: 'webhook_url' }] });
        expect(res.headers['webhook-delivery-status']).toBeUndefined();
        expect(res.body).not.toContain('internal secret');
      }
      expect(hits).toBe(before);
    });
  });

  it('metadata addresses are refused even where private targets are allowed', async () => {
    await withSandbox({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }, async (t, token) => {
      for (const url of ['http://169.254.169.254/latest/meta-data', 'http://[fd00:ec2::254]/', 'http://100.100.100.200/', 'http://[::ffff:a9fe:a9fe]/']) {
        const res = await mock(t, token, url);
        expect(res.statusCode, url).toBe(400);
        expect(res.json().errors[0].field).toBe('webhook_url');
      }
    });
  });

  it("a local developer's sandbox delivers to a loopback receiver but does not report what it answered", async () => {
    await withSandbox({}, async (t, token) => {
      const before = hits;
      const res = await mock(t, token, `http://127.0.0.1:${port}/hook`);
      expect(res.statusCode).toBe(200);
      expect(hits).toBe(before + 1);
      expect(res.headers['webhook-delivery-status']).toBeUndefined();
      expect(res.body).not.toContain('internal secret');
    });
  });
});
