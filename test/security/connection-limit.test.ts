/**
 * One client address holds at most MAX_CONNECTIONS_PER_ADDRESS open connections (issue #16 §5):
 * the next one is answered 429 with `Retry-After` and closed without its request being served;
 * when a connection closes, a new one is served again. Behind a trusted proxy the default is no
 * limit (every connection comes from the proxy).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { testApp, type TestApp } from '../helpers/app.js';

describe('open connections per client address', () => {
  let t: TestApp;
  let port: number;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    t = await testApp({ MAX_CONNECTIONS_PER_ADDRESS: '5' });
    port = Number(new URL(await t.listen()).port);
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await t.close();
  });

  const open = () =>
    new Promise<Socket>((resolve) => {
      const s = connect(port, '127.0.0.1', () => resolve(s));
      s.on('error', () => undefined);
      sockets.push(s);
    });
  /** Sends a GET /healthz on a new connection; resolves with the answer once the server closes or answers. */
  const get = () =>
    new Promise<string>((resolve) => {
      const s = connect(port, '127.0.0.1', () => s.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n'));
      let answer = '';
      s.on('data', (d) => (answer += d.toString()));
      s.on('error', () => undefined);
      s.on('close', () => resolve(answer));
    });

  it('refuses the connection over the limit with 429, and serves again once one closes', async () => {
    const held = await Promise.all(Array.from({ length: 5 }, open));
    const refused = await get();
    expect(refused).toMatch(/^HTTP\/1\.1 429 /);
    expect(refused).toMatch(/retry-after: 5/i);
    expect(refused).toContain('too many open connections from your address');
    held[0]!.destroy();
    await new Promise((r) => setTimeout(r, 100));
    expect(await get()).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('is on by default, and off by default behind a trusted proxy', () => {
    expect(loadConfig({}).maxConnectionsPerAddress).toBe(256);
    expect(loadConfig({ TRUST_PROXY: '1' }).maxConnectionsPerAddress).toBe(0);
    expect(loadConfig({ TRUST_PROXY: '1', MAX_CONNECTIONS_PER_ADDRESS: '50' }).maxConnectionsPerAddress).toBe(50);
  });
});
