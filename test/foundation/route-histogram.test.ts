/**
 * The request-latency histogram of /metrics (src/http/route-histogram.ts) renders exactly what
 * prom-client's own Histogram renders for the same observations: buckets (cumulative, `le`
 * inclusive, `+Inf`), sum and count per series.
 */
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RouteHistogram } from '../../src/http/route-histogram.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

describe('route latency histogram', () => {
  it('renders as prom-client does, series by series', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const h = new RouteHistogram('carebook_test_seconds', 'test latency', BUCKETS, ours);
    const p = new Histogram({ name: 'carebook_test_seconds', help: 'test latency', labelNames: ['method', 'route', 'status'], buckets: BUCKETS, registers: [theirs] });
    const observations: [string, string, string, number][] = [
      ['GET', '/v1/appointments/:appointment_id', '2xx', 0.0004],
      ['GET', '/v1/appointments/:appointment_id', '2xx', 0.001], // exactly on a bound: le is inclusive
      ['GET', '/v1/appointments/:appointment_id', '4xx', 0.03],
      ['POST', '/v1/appointments', '2xx', 0.2],
      ['POST', '/v1/appointments', '2xx', 7], // past the last bound: +Inf only
      ['GET', 'unmatched', '4xx', 0.0026],
    ];
    for (const [method, route, status, v] of observations) {
      h.observe(`${method} ${status} ${route}`, () => ({ method, route, status }), v);
      p.observe({ method, route, status }, v);
    }
    const lines = (s: string) => s.split('\n').filter(Boolean).sort();
    expect(lines(await ours.metrics())).toEqual(lines(await theirs.metrics()));
    h.reset();
    expect(await ours.metrics()).not.toContain('_bucket');
  });
});
