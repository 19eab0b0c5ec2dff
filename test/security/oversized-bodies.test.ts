/**
 * Oversized bodies are answered, never reset (issue #16 §5): a client that sends a body too large
 * (at network pace, reading only once it has sent it all, as simple clients do) receives the whole
 * 413 (or the token endpoint's 400) answer with its body, also when several send at once. Closing
 * the connection right after the answer, as before, reset it under the still-arriving body and the
 * client got EPIPE and no answer. The connection then closes (after lingering, src/http/lingering-close.ts) even if the
 * client keeps sending; an attachment upload announcing more than 10 MB is refused before its body
 * is read (400 naming `attachment`, as the interface lists for attachment rules).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINGER_MS } from '../../src/http/lingering-close.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { clientToken } from '../helpers/auth.js';

interface Exchange {
  /** Everything the server sent. */
  answer: string;
  /** Bytes of the body written before the answer's first byte arrived. */
  sentBeforeAnswer: number;
  closedAfterMs: number;
  error?: string;
}

describe('oversized request bodies', () => {
  let t: TestApp;
  let port: number;
  let token: string;
  beforeAll(async () => {
    t = await testApp();
    port = Number(new URL(await t.listen()).port);
    token = await clientToken(t, await newDeveloper(t));
  });
  afterAll(async () => t.close());

  /**
   * Sends `head`, then body chunks of `chunk` bytes until `total` bytes are written or the socket
   * closes (`keepSending`: also after the answer arrived); resolves with what came back. With
   * `readAfterSending` the client reads nothing until its whole body is written, as simple HTTP
   * clients do: an answer the server's kernel reset in the meantime is lost to it.
   */
  function send(head: string, total: number, opts: { chunk?: number; keepSending?: boolean; readAfterSending?: boolean; chunkDelayMs?: number } = {}): Promise<Exchange> {
    const chunk = Buffer.alloc(opts.chunk ?? 64 * 1024, 0x61);
    return new Promise((resolve) => {
      const started = Date.now();
      const socket: Socket = connect(port, '127.0.0.1');
      let answer = '';
      let sent = 0;
      let sentBeforeAnswer = -1;
      let error: string | undefined;
      let open = true;
      const pump = () => {
        while (open && sent < total && (opts.keepSending || sentBeforeAnswer < 0)) {
          const n = Math.min(chunk.length, total - sent);
          sent += n;
          const flushed = socket.write(n === chunk.length ? chunk : chunk.subarray(0, n));
          if (opts.chunkDelayMs) return void setTimeout(pump, opts.chunkDelayMs);
          if (!flushed) return void socket.once('drain', pump);
        }
        if (opts.readAfterSending && sent >= total) socket.write('', () => setTimeout(() => socket.resume(), 200));
      };
      socket.on('connect', () => {
        if (opts.readAfterSending) socket.pause();
        socket.write(head);
        pump();
      });
      socket.on('data', (d) => {
        if (sentBeforeAnswer < 0) sentBeforeAnswer = sent;
        answer += d.toString('latin1');
      });
      socket.on('error', (e) => (error = (e as NodeJS.ErrnoException).code ?? e.message));
      socket.on('close', () => {
        open = false;
        resolve({ answer, sentBeforeAnswer, closedAfterMs: Date.now() - started, ...(error ? { error } : {}) });
      });
    });
  }
  const jsonHead = (path: string, length: number, auth = true) =>
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n${auth ? `authorization: Bearer ${token}\r\n` : ''}\r\n`;

  it('2 MB JSON bodies sent by several clients at once: every client reads its whole 413 answer', async () => {
    const total = 2 * 1024 * 1024;
    const results = await Promise.all(Array.from({ length: 6 }, () => send(jsonHead('/v1/appointments', total), total, { readAfterSending: true, chunkDelayMs: 5 })));
    for (const r of results) {
      expect(r.answer, r.error).toMatch(/^HTTP\/1\.1 413 /);
      const body = JSON.parse(r.answer.slice(r.answer.indexOf('\r\n\r\n') + 4)) as { error_type: string; errors: { message: string }[] };
      expect(body).toMatchObject({ error_type: 'invalid_request', errors: [{ message: 'request body too large' }] });
    }
  });

  it('a 3 MB body to the token endpoint: the OAuth error answer arrives whole', async () => {
    const total = 3 * 1024 * 1024;
    const r = await send(`POST /auth/oauth/token HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${total}\r\n\r\n`, total, { readAfterSending: true, chunkDelayMs: 5 });
    expect(r.answer, r.error).toMatch(/^HTTP\/1\.1 400 /);
    expect(r.answer).toContain('"error":"invalid_request"');
  });

  it('a client that keeps sending after the answer is cut off within the linger time', async () => {
    const r = await send(jsonHead('/v1/appointments', 500 * 1024 * 1024), 500 * 1024 * 1024, { keepSending: true });
    expect(r.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(r.closedAfterMs).toBeLessThan(LINGER_MS + 5_000);
  });

  it('an attachment announcing 1.5 GB is refused (400, as every attachment rule) before its body is read', async () => {
    const total = 1.5 * 1024 * 1024 * 1024;
    const head =
      `POST /v1/appointments/7b1f2c9e-4d3a-4e8b-9c61-0f5a2d3e4b7c/attachments HTTP/1.1\r\nhost: 127.0.0.1\r\n` +
      `content-type: multipart/form-data; boundary=XyZ\r\ncontent-length: ${total}\r\nauthorization: Bearer ${token}\r\n\r\n`;
    const r = await send(head, total, { keepSending: true });
    expect(r.answer, r.error).toMatch(/^HTTP\/1\.1 400 /);
    expect(r.answer).toContain('must be under 10 MB');
    expect(r.sentBeforeAnswer).toBeLessThan(64 * 1024 * 1024);
    expect(r.closedAfterMs).toBeLessThan(LINGER_MS + 10_000);
  });
});
