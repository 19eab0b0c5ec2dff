/**
 * A separate admin listener (`ADMIN_PORT`, docs/operator-guide.md, "The admin API"): the admin API
 * answers only on connections to that port, which is bound to `ADMIN_HOST` (loopback by default),
 * and that port answers only the admin API and the health paths. The public port then answers
 * `/admin/...` with the same 404 as any unknown path, so a public load balancer cannot reach it
 * even if it routes everything.
 */
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { sendError } from './error-handler.js';

const HEALTH_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** Whether a request path belongs to the admin API. */
const isAdminPath = (path: string) => path === '/admin' || path.startsWith('/admin/');

/** Installs the split (call before routes are registered): each port answers only its own paths. */
export function splitAdminPort(app: FastifyInstance, adminPort: number): void {
  app.addHook('onRequest', (req, reply, done) => {
    const path = req.url.split('?')[0]!;
    const onAdminPort = req.raw.socket?.localPort === adminPort;
    if (isAdminPath(path) === onAdminPort || HEALTH_PATHS.has(path)) return done();
    sendError(reply, 404, 'invalid_request', [{ message: `no route for ${req.method} ${path}` }]);
  });
}

/**
 * Serves `app` on a second listener at `host:port` (the admin port); returns the server, to be
 * closed with the application. Same request time limit as the main listener.
 */
export async function listenAdmin(app: FastifyInstance, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => app.routing(req, res));
  server.requestTimeout = app.server.requestTimeout;
  server.headersTimeout = app.server.headersTimeout;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

/** Closes the admin listener: stops accepting, ends idle connections, and waits for the rest. */
export async function closeAdmin(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
