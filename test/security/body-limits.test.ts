/**
 * Request bodies have a time limit (issue #16 §5): a request whose headers and body have not all
 * arrived within REQUEST_TIMEOUT_SECONDS is answered 408 and its connection closed, so a client
 * sending a body a byte at a time cannot hold a connection open for minutes.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { clientToken } from '../helpers/auth.js';

describe('request time limit', () => {
  let t: TestApp;
  let port: number;
  let token: string;
  beforeAll(async () => {
    t = await testApp({ REQUEST_TIMEOUT_SECONDS: '2' });
    port = Number(new URL(await t.listen()).port);
    token = await clientToken(t, await newDeveloper(t));
  });
  afterAll(async () => t.close());

  /** Sends the head and `firstBytes` of a body, then a byte every `dribbleMs`; resolves with what came back and when the socket closed. */
  function slowPost(path: string, dribbleMs: number, auth = ''): Promise<{ answer: string; closedAfterMs: number }> {
    return new Promise((resolve) => {
      const started = Date.now();
      const socket = connect(port, '127.0.0.1');
      let answer = '';
      let timer: NodeJS.Timeout | undefined;
      socket.on('connect', () => {
        socket.write(`POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n${auth}\r\n{`);
        timer = setInterval(() => socket.write(' '), dribbleMs);
      });
      socket.on('data', (d) => (answer += d.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(timer);
        resolve({ answer, closedAfterMs: Date.now() - started });
      });
    });
  }

  it('answers 408 and closes a request whose body dribbles in, within the limit plus the check interval', async () => {
    for (const [path, auth] of [['/auth/oauth/token', ''], ['/v1/appointments', `authorization: Bearer ${token}\r\n`]] as const) {
      const { answer, closedAfterMs } = await slowPost(path, 300, auth);
      expect(answer, path).toMatch(/^HTTP\/1\.1 408/);
      expect(closedAfterMs, path).toBeGreaterThanOrEqual(1900);
      expect(closedAfterMs, path).toBeLessThan(6000);
    }
  });

  it('a request that arrives in time is served as usual', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
  });
});
