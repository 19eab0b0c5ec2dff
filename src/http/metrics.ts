/**
 * Prometheus metrics (`GET /metrics`): one registry per app instance, request counts and latency
 * by route pattern (never by raw URL, which could carry identifiers).
 */
import type { FastifyInstance } from 'fastify';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import { RouteHistogram } from './route-histogram.js';

export function installMetrics(app: FastifyInstance): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'carebook_' });
  const duration = new RouteHistogram(
    'carebook_http_request_duration_seconds',
    'HTTP request latency by route and status class',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registry,
  );
  const errors = new Counter({
    name: 'carebook_http_server_errors_total',
    help: 'Responses with status 500 or above',
    labelNames: ['route'],
    registers: [registry],
  });
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const status = `${Math.floor(reply.statusCode / 100)}xx`;
    duration.observe(`${req.method} ${status} ${route}`, () => ({ method: req.method, route, status }), reply.elapsedTime / 1000);
    if (reply.statusCode >= 500) errors.inc({ route });
    done();
  });
  return registry;
}
