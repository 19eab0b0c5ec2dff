/**
 * Records every answered call of a developer's credential in the request log (docs/api/request-log.md):
 * method, URL without query values, status, latency and `request_id`; the error body only for a
 * refused call (status ≥ 400), never a request body or a successful answer, so no patient data is
 * kept. Entries go through a {@link RequestLogBuffer}; calls without a verified token are not logged
 * (they belong to no developer).
 */
import type { FastifyInstance } from 'fastify';
import { keptErrorBody, type RequestLogBuffer } from '../domain/request-log/buffer.js';
import { redactUrl } from './logger.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The error body sent, kept for the request log. */
    loggedErrorBody?: unknown;
  }
}

/** Adds the request log's hooks to `app` (callback-style: no promise per request). */
export function installRequestLog(app: FastifyInstance, buffer: RequestLogBuffer): void {
  app.addHook('onSend', (req, reply, payload, done) => {
    if (req.caller && reply.statusCode >= 400) req.loggedErrorBody = keptErrorBody(payload);
    done(null, payload);
  });
  app.addHook('onResponse', (req, reply, done) => {
    const caller = req.caller;
    if (caller) {
      buffer.add({
        env: caller.env,
        developer_id: caller.developerId,
        client_id: caller.clientId,
        at: new Date(Date.now() - reply.elapsedTime),
        method: req.method,
        path: redactUrl(req.url),
        status: reply.statusCode,
        latency_ms: reply.elapsedTime,
        request_id: String(req.id),
        error: reply.statusCode >= 400 ? (req.loggedErrorBody ?? null) : null,
      });
    }
    done();
  });
  app.addHook('onClose', async () => buffer.close());
}
