/**
 * A forwarding proxy in front of the real service that can answer chosen requests itself first
 * (e.g. a 429 from the token endpoint), so retries are tested against the real service behind it.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { testPort } from '../../../test/helpers/app.js';

/** An answer the proxy gives instead of forwarding. */
export interface Interjection {
  status: number;
  headers?: Record<string, string>;
}

export interface Proxy {
  url: string;
  /** Every request the proxy saw: path, and the status it answered. */
  seen: { path: string; status: number; at: number }[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'content-encoding', 'keep-alive']);

async function bodyOf(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? Buffer.concat(chunks) : undefined;
}

/**
 * Starts a proxy to `target`. `interject(path)` returns an answer to give instead of forwarding,
 * or undefined to forward the request unchanged.
 */
export async function startProxy(target: string, interject: (path: string) => Interjection | undefined): Promise<Proxy> {
  const seen: Proxy['seen'] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = req.url ?? '/';
      const body = await bodyOf(req);
      const own = interject(path);
      if (own) {
        seen.push({ path, status: own.status, at: Date.now() });
        res.writeHead(own.status, { 'content-type': 'application/json', ...own.headers }).end(JSON.stringify({ error: 'temporarily_unavailable' }));
        return;
      }
      const headers = Object.entries(req.headers).filter(([k]) => !HOP_BY_HOP.has(k)) as [string, string][];
      const upstream = await fetch(`${target}${path}`, { method: req.method, headers, body: body ? new Uint8Array(body) : undefined });
      seen.push({ path, status: upstream.status, at: Date.now() });
      const answer: Record<string, string> = {};
      upstream.headers.forEach((value, key) => {
        if (!HOP_BY_HOP.has(key)) answer[key] = value;
      });
      res.writeHead(upstream.status, answer);
      res.end(Buffer.from(await upstream.arrayBuffer()));
    })().catch((e: unknown) => res.writeHead(502).end(String(e)));
  });
  const port = testPort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
