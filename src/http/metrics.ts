/**
 * Prometheus metrics (`GET /metrics`): one registry per app instance, request counts and latency
 * by route pattern (never by raw URL, which could carry identifiers), the counters of the
 * background jobs running in the process (by job name), and on PostgreSQL the connection pool's
 * counts (docs/operator-guide.md, "Health and monitoring").
 */
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { JobHandles } from '../jobs/registry.js';
import type { JobStats } from '../jobs/loop.js';
import type { PoolStats } from '../db/database.js';
import type { ReplicaState } from '../db/replica-state.js';
import { RouteHistogram } from './route-histogram.js';

/** What `/metrics` reports besides the process and HTTP metrics, when the process has it. */
export interface MetricSources {
  /** The background jobs running in this process. */
  jobs?: JobHandles | undefined;
  /** The read replica's state. */
  replica?: ReplicaState | undefined;
  /** PostgreSQL: the connection pool's counts. */
  poolStats?: (() => PoolStats) | undefined;
}

/**
 * Creates the app's registry: default process metrics, HTTP metrics and, when `jobs` run in this
 * process, theirs; with a read replica, whether it serves reads and its lag; on PostgreSQL, the pool.
 */
export function installMetrics(app: FastifyInstance, { jobs, replica, poolStats }: MetricSources = {}): Registry {
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
  if (jobs) installJobMetrics(registry, jobs);
  if (replica) installReplicaMetrics(registry, replica);
  if (poolStats) installPoolMetrics(registry, poolStats);
  return registry;
}

/**
 * The PostgreSQL connection pool (`DATABASE_POOL_SIZE`): how many connections are open and in use,
 * and how many statements wait for one. Waiting above zero in scrape after scrape, with the database
 * server's CPU to spare, is the sign that a larger pool would help.
 */
function installPoolMetrics(registry: Registry, poolStats: () => PoolStats): void {
  new Gauge({
    name: 'carebook_db_pool_size',
    help: 'The most connections to PostgreSQL this process opens (DATABASE_POOL_SIZE)',
    registers: [registry],
    collect() {
      this.set(poolStats().size);
    },
  });
  new Gauge({
    name: 'carebook_db_pool_connections',
    help: 'Open connections to PostgreSQL, by state: in_use (a statement or transaction holds it) or idle',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const s = poolStats();
      this.set({ state: 'in_use' }, s.open - s.idle);
      this.set({ state: 'idle' }, s.idle);
    },
  });
  new Gauge({
    name: 'carebook_db_pool_waiting',
    help: 'Statements and transactions waiting for a connection to PostgreSQL (all connections in use)',
    registers: [registry],
    collect() {
      this.set(poolStats().waiting);
    },
  });
}

/** The read replica's state as this process sees it (docs/operator-guide.md, "Read replicas"). */
function installReplicaMetrics(registry: Registry, replica: ReplicaState): void {
  new Gauge({
    name: 'carebook_replica_usable',
    help: '1 while the read replica serves the directory and availability reads, 0 while they go to the primary',
    registers: [registry],
    collect() {
      this.set(replica.usable() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'carebook_replica_lag_seconds',
    help: 'How far the read replica is behind the primary, by WAL position (absent while unreachable or unknown)',
    registers: [registry],
    collect() {
      this.reset();
      const lag = replica.lagMs();
      if (lag !== undefined) this.set(lag / 1000);
    },
  });
}

/** The jobs' counters, read from the loops whenever `/metrics` is scraped. */
function installJobMetrics(registry: Registry, jobs: JobHandles): void {
  const counter = (name: string, help: string, value: (s: JobStats) => number): void => {
    new Counter({
      name,
      help,
      labelNames: ['job'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of jobs.stats()) this.inc({ job: s.job }, value(s));
      },
    });
  };
  counter('carebook_job_passes_total', 'Background job passes that ended, failed ones included', (s) => s.passes);
  counter('carebook_job_failures_total', 'Background job passes that failed', (s) => s.failures);
  counter('carebook_job_items_total', 'Items handled by background job passes (rows, events, summaries, tables)', (s) => s.items);
  new Gauge({
    name: 'carebook_job_last_pass_duration_seconds',
    help: 'Duration of the last pass of each background job',
    labelNames: ['job'],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of jobs.stats()) if (s.lastDurationMs !== undefined) this.set({ job: s.job }, s.lastDurationMs / 1000);
    },
  });
}
