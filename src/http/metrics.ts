/**
 * Prometheus metrics (`GET /metrics`): one registry per app instance, request counts and latency
 * by route pattern (never by raw URL, which could carry identifiers).
 */
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function installMetrics(app: FastifyInstance): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'carebook_' });
  const duration = new Histogram({
    name: 'carebook_http_request_duration_seconds',
    help: 'HTTP request latency by route and status class',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'carebook_http_server_errors_total',
    help: 'Responses with status 500 or above',
    labelNames: ['route'],
    registers: [registry],
  });
  // The labelled child of each (method, route, status class), looked up once: prom-client would
  // otherwise hash the label object on every observation.
  const series = new Map<string, { observe(v: number): void }>();
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const status = `${Math.floor(reply.statusCode / 100)}xx`;
    const key = `${req.method} ${status} ${route}`;
    let child = series.get(key);
    if (!child) series.set(key, (child = duration.labels({ method: req.method, route, status })));
    child.observe(reply.elapsedTime / 1000);
    if (reply.statusCode >= 500) errors.inc({ route });
    done();
  });
  return registry;
}
