/**
 * `carebook serve --processes N`: several API processes on one machine, sharing one listening port
 * through Node's cluster module (docs/api/deployment.md#scale-out: any number of API processes on one
 * PostgreSQL; here the cluster's primary is the load balancer).
 *
 * The primary migrates the database and bootstraps the sandbox once, then forks N workers and does
 * no HTTP itself. Each worker is a complete `serve` process (API, auth server and, unless
 * `--no-workers`, the background loops, which claim their rows with row locks). A worker that dies is
 * replaced; if workers keep dying (more than `MAX_RESTARTS` within `RESTART_WINDOW_MS`), the primary
 * stops them all and exits 1 rather than crash-looping. SIGINT/SIGTERM: the primary asks every worker
 * to shut down gracefully (each lets its in-flight requests finish, as `serve` does) and exits 0 when
 * they have; a worker still running past the grace period plus a margin is killed.
 *
 * Needs PostgreSQL: the embedded database admits one process. Rate-limit counters are per process
 * unless `REDIS_URL` is set, so without Redis a credential's limit applies per process.
 */
import cluster, { type Worker } from 'node:cluster';
import pino from 'pino';
import type { Config } from './config.js';
import { openDatabase } from './db/database.js';
import { loggerOptions } from './http/logger.js';
import { withKeyEncryption } from './auth/key-encryption.js';
import { prepareDatabase } from './server.js';

const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;

export interface ClusterOptions {
  processes: number;
}

/**
 * Runs the cluster's primary: prepares the database, forks `processes` workers (which re-run the same
 * command line; `cluster.isWorker` tells `serve` to start the service), supervises them and handles
 * the shutdown signals. Resolves once every worker is listening.
 */
export async function startClusterPrimary(given: Config, opts: ClusterOptions): Promise<void> {
  // The key-encryption key is resolved (generated into DATA_DIR, where that is the default) once,
  // here, before the API processes start and read it.
  const config = await withKeyEncryption(given);
  const logger = pino(loggerOptions(config.logLevel));
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, preparedStatements: config.preparedStatements, poolSize: 1 });
  try {
    await prepareDatabase(handle.db, config, logger, true);
  } finally {
    await handle.close();
  }
  if (!config.redisUrl) {
    logger.warn({ processes: opts.processes }, 'REDIS_URL is not set: rate-limit counters are kept per process, so each credential gets its limit in every process');
  }

  let stopping = false;
  let exitWith = 0;
  const restarts: number[] = [];
  // A worker re-runs this command line (`--no-workers` included); `cluster.isWorker` makes it serve.
  const fork = (): Worker => cluster.fork();

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitWith);
      return;
    }
    const now = Date.now();
    while (restarts.length && now - restarts[0]! > RESTART_WINDOW_MS) restarts.shift();
    if (restarts.length >= MAX_RESTARTS) {
      logger.error({ worker_pid: worker.process.pid, code, signal }, `API process exited; ${MAX_RESTARTS} restarts within ${RESTART_WINDOW_MS / 1000} s, giving up`);
      stopAll(1);
      return;
    }
    restarts.push(now);
    logger.error({ worker_pid: worker.process.pid, code, signal }, 'API process exited; starting another');
    fork();
  });

  const stopAll = (exitCode: number): void => {
    if (stopping) return;
    stopping = true;
    exitWith = exitCode;
    const live = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w);
    if (live.length === 0) process.exit(exitCode);
    for (const w of live) w.process.kill('SIGTERM');
    // Every worker gets the grace period for in-flight requests, then a margin to close its pools.
    setTimeout(() => {
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
      process.exit(exitCode || 1);
    }, config.shutdownGraceSeconds * 1000 + 5_000).unref();
  };
  process.once('SIGINT', () => stopAll(0));
  process.once('SIGTERM', () => stopAll(0));

  let listening = 0;
  const ready = new Promise<void>((resolve) => {
    cluster.on('listening', () => {
      if (++listening === opts.processes) resolve();
    });
  });
  for (let i = 0; i < opts.processes; i++) fork();
  await ready;
  const url = `http://${config.host}:${config.port}`;
  process.stdout.write(`Carebook (${config.appEnv}) listening on ${url} with ${opts.processes} API processes  docs: ${url}/docs\n`);
}
