/** `carebook serve | worker | migrate`: run the service, its background workers, or the migrations. */
import cluster from 'node:cluster';
import type { Command } from 'commander';
import { startClusterPrimary } from '../../cluster.js';
import { startService, startWorkerProcess } from '../../server.js';
import { intArg, UsageError, withDb, type ConfigSource } from '../command-support.js';

/**
 * Shuts a starting or running process down gracefully on SIGINT/SIGTERM, then exits 0.
 *
 * The handlers go in before `starting` is awaited: a signal that arrives while the service starts
 * (or in the instant after it announces itself) waits for the start and then closes, instead of
 * meeting the default disposition and killing the process mid-write.
 */
export async function closeOnSignal(starting: Promise<{ close(): Promise<void> }>): Promise<void> {
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void starting.then((s) => s.close()).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await starting;
}

/** Adds `serve`, `worker` and `migrate` to `program`. */
export function addServiceCommands(program: Command, config: ConfigSource): void {
  program
    .command('serve')
    .description('start the API and auth server (and the background workers, unless --no-workers)')
    .option('--no-workers', 'serve HTTP only; run `carebook worker` processes for the background work')
    .option('--processes <n>', 'API processes sharing the port, one per core is typical (needs DATABASE_URL)', intArg('--processes', 1, 64), 1)
    .action(async (o: { workers: boolean; processes: number }) => {
      const cfg = config();
      if (o.processes > 1 && cluster.isPrimary) {
        if (!cfg.databaseUrl) throw new UsageError('--processes needs DATABASE_URL: the embedded database admits one process');
        await startClusterPrimary(cfg, { processes: o.processes });
        return;
      }
      await closeOnSignal(startService(cfg, { workers: o.workers, announce: cluster.isPrimary }));
    });

  program
    .command('worker')
    .description('run the background workers only (booking evaluation, webhook delivery); several may run at once')
    .action(async () => {
      const cfg = config();
      if (!cfg.databaseUrl) throw new Error('worker needs DATABASE_URL: the embedded database admits one process (`serve` runs the workers itself)');
      await closeOnSignal(startWorkerProcess(cfg));
    });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => {
      const applied = await withDb(config(), async () => []);
      void applied;
      process.stdout.write('migrations are current\n');
    });
}
