/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests, with its own signature check written from
 * docs/api/webhooks.md#signature (deliberately not the project's signer).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { testPort } from '../helpers/app.js';

export interface Received {
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  body: unknown;
  /** Which of the receiver's keys verified a signature of this request. */
  verifiedWith: string[];
}

/** docs/api/webhooks.md#signature: v1:base64(HMAC-SHA256(base64-decoded key, `${timestamp}.${raw body}`)), several `;`-separated. */
export function verify(keyB64: string, timestamp: string, raw: string, header: string): boolean {
  const expected = createHmac('sha256', Buffer.from(keyB64, 'base64')).update(`${timestamp}.${raw}`).digest();
  return header.split(';').some((part) => {
    if (!part.startsWith('v1:')) return false;
    const got = Buffer.from(part.slice(3), 'base64');
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Status to answer with for the next requests (shifted per request; default 200). */
  plan: number[];
  /** The body every answer carries (default `ok`). */
  answer: string | Buffer;
  close(): Promise<void>;
}

export async function startReceiver(keys: string[], port = testPort()): Promise<Receiver> {
  const r: Receiver = { url: `http://127.0.0.1:${port}/hook`, port, received: [], plan: [], answer: 'ok', close: async () => undefined };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += String(d)));
    req.on('end', () => {
      const ts = String(req.headers['webhook-timestamp'] ?? '');
      const sig = String(req.headers['webhook-signature'] ?? '');
      r.received.push({ headers: req.headers, raw, body: JSON.parse(raw || 'null'), verifiedWith: keys.filter((k) => verify(k, ts, raw, sig)) });
      res.statusCode = r.plan.shift() ?? 200;
      res.end(r.answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  r.close = () => new Promise((resolve) => server.close(() => resolve()));
  return r;
}
