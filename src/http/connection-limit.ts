/**
 * At most `MAX_CONNECTIONS_PER_ADDRESS` open connections per client address (docs/operator-guide.md,
 * "Limits"): one client cannot hold thousands of sockets (slow bodies are also bounded in time by
 * REQUEST_TIMEOUT_SECONDS). A connection over the limit is answered `429` with `Retry-After` and
 * closed before any request on it is read. Counted per process, on the socket's own address: behind
 * a proxy every connection comes from the proxy, so the limit is off by default there and the load
 * balancer bounds each client.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

const REFUSAL_BODY = JSON.stringify({ request_id: '', error_type: 'api_error', errors: [{ message: 'too many open connections from your address' }] });
const REFUSAL =
  'HTTP/1.1 429 Too Many Requests\r\nconnection: close\r\nretry-after: 5\r\ncontent-type: application/json; charset=utf-8\r\n' +
  `content-length: ${Buffer.byteLength(REFUSAL_BODY)}\r\n\r\n${REFUSAL_BODY}`;

/** Installs the limit on `server`; returns a reader of the open connections per address (for tests and metrics). */
export function limitConnectionsPerAddress(server: Server, max: number): () => Map<string, number> {
  const open = new Map<string, number>();
  if (max <= 0) return () => open;
  // The gate runs before Node's own connection listener (which starts parsing HTTP on the socket),
  // and calls it only for a connection within the limit: a refused one is never parsed.
  const parsers = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > max) {
      // Answer, then close after a moment (not at once: a reset could lose the answer).
      socket.on('error', () => undefined);
      socket.resume();
      socket.end(REFUSAL);
      setTimeout(() => socket.destroy(), 1_000).unref();
      return;
    }
    for (const parse of parsers) parse.call(server, socket);
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
  return () => open;
}
