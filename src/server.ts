/**
 * Runs the service: opens the database, migrates, bootstraps the sandbox, listens, and shuts down
 * gracefully on SIGINT/SIGTERM (stop accepting, let in-flight requests finish, close the database).
 */
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { keyEncryptionOf, withKeyEncryption } from './auth/key-encryption.js';
import { KeyStore } from './auth/signing-keys.js';
import { attachmentStoreFor } from './domain/attachments/store-for.js';
import { sweepAttachmentFiles } from './domain/attachments/sweep.js';
import { bootstrapSandbox } from './domain/demo/bootstrap.js';
import { buildApp } from './http/app.js';
import { closeAdmin, listenAdmin } from './http/admin-listener.js';
import { loggerOptions } from './http/logger.js';
import { startJobs, type JobHandles } from './jobs/registry.js';
import { startLoop } from './jobs/loop.js';
import { replicaLagJob } from './jobs/replica-lag.js';
import { openReplica, type ReplicaHandle } from './db/replica.js';

export interface RunningService {
  url: string;
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** An already open database (tests); otherwise opened from the configuration and closed on close(). */
  handle?: DatabaseHandle;
  /** For PostgreSQL: schema first on the replica's search_path, as on `handle`'s (tests and benchmarks on a shared server). */
  replicaSchema?: string;
  quiet?: boolean;
  /** Run the background jobs in this process too (default true). */
  workers?: boolean;
  /** Print the demo credentials and the listening address (default true; false in a cluster's worker, whose primary prints them). */
  announce?: boolean;
}

export async function startService(given: Config, opts: ServiceOptions = {}): Promise<RunningService> {
  const config = await withKeyEncryption(given);
  const logger = pino(loggerOptions(opts.quiet ? 'silent' : config.logLevel));
  const handle =
    opts.handle ??
    (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, preparedStatements: config.preparedStatements, poolSize: config.databasePoolSize }));
  const announce = !opts.quiet && opts.announce !== false;
  await prepareDatabase(handle.db, config, logger, announce);
  // Attachment bytes: files under DATA_DIR on the embedded engine (docs/decisions/0016-attachment-files.md);
  // files a crash left without a row go before the service listens.
  const attachments = await attachmentStoreFor(handle.engine, config.dataDir);
  if (attachments.kind === 'files') {
    const swept = await sweepAttachmentFiles(handle.db, attachments);
    if (swept) logger.info({ event: 'attachment_files_swept', items: swept }, 'attachment files without a row removed');
  }

  // With the background jobs in this process the API kicks the insurance-mapping job after each
  // accepted request (so it is applied at once); without them (`serve --no-workers`) the
  // `carebook worker` processes apply it on their next pass.
  const jobs = opts.workers !== false ? startJobs({ db: handle.db, config, engine: handle.engine }, logger) : undefined;
  // DATABASE_REPLICA_URL: this process's own replica pool and lag check (docs/decisions/0020-read-replicas.md).
  const replica: ReplicaHandle | undefined = config.databaseReplicaUrl
    ? await openReplica(handle, {
        url: config.databaseReplicaUrl,
        maxLagMs: config.databaseReplicaMaxLagMs,
        preparedStatements: config.preparedStatements,
        poolSize: config.databasePoolSize,
        ...(opts.replicaSchema ? { schema: opts.replicaSchema } : {}),
      })
    : undefined;
  const replicaLoop = replica ? startLoop(replicaLagJob(replica, logger), logger) : undefined;
  const jobHandles: JobHandles | undefined =
    jobs || replicaLoop
      ? { kicker: (name) => jobs?.kicker(name) ?? (() => {}), stats: () => [...(jobs?.stats() ?? []), ...(replicaLoop ? [replicaLoop.stats()] : [])] }
      : undefined;
  const stopBackground = async (): Promise<void> => {
    await Promise.all([jobs?.stop(), replicaLoop?.stop()]);
    await replica?.close();
  };
  let app: Awaited<ReturnType<typeof buildApp>>;
  let adminServer: Awaited<ReturnType<typeof listenAdmin>> | undefined;
  try {
    app = await buildApp({
      config,
      db: handle.db,
      logger,
      attachments,
      ...(jobHandles ? { jobs: jobHandles } : {}),
      ...(replica ? { replica } : {}),
      ...(handle.poolStats ? { poolStats: handle.poolStats } : {}),
    });
    await app.listen({ port: config.port, host: config.host });
    adminServer = config.adminPort !== undefined && config.adminToken ? await listenAdmin(app, config.adminHost, config.adminPort) : undefined;
  } catch (err) {
    await stopBackground();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host}:${port}`;
  if (announce) process.stdout.write(`Carebook (${config.appEnv}) listening on ${url}  docs: ${url}/docs\n`);
  if (announce && adminServer) process.stdout.write(`Admin API on http://${config.adminHost}:${config.adminPort}/admin/v1\n`);

  let closing: Promise<void> | undefined;
  return {
    url,
    close: () =>
      (closing ??= (async () => {
        await Promise.all([jobs?.stop(), replicaLoop?.stop()]);
        if (adminServer) await closeAdmin(adminServer);
        await app.close();
        await replica?.close();
        if (!opts.handle) await handle.close();
      })()),
  };
}

/**
 * `carebook worker`: the background jobs alone, no HTTP (docs/api/deployment.md#scale-out). Needs a
 * shared PostgreSQL (`DATABASE_URL`); the embedded database admits one process. `jobs` names the
 * jobs it runs.
 */
export async function startWorkerProcess(
  config: Config,
  opts: { handle?: DatabaseHandle; quiet?: boolean } = {},
): Promise<{ jobs: readonly string[]; close(): Promise<void> }> {
  const logger = pino(loggerOptions(opts.quiet ? 'silent' : config.logLevel));
  const handle = opts.handle ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, preparedStatements: config.preparedStatements, poolSize: config.databasePoolSize }));
  await migrateToLatest(handle.db);
  const jobs = startJobs({ db: handle.db, config, engine: handle.engine }, logger);
  logger.info({ env: config.appEnv, jobs: jobs.names }, 'background workers started');
  return {
    jobs: jobs.names,
    async close() {
      await jobs.stop();
      if (!opts.handle) await handle.close();
    },
  };
}

/**
 * What a starting service does to its database before it serves: applies pending migrations and, in
 * the sandbox, bootstraps the demo developer and directory (docs/api/deployment.md, docs/api/sandbox.md#demo-developer), printing the demo
 * credentials when `announce`. Shared by `serve` and the primary of `serve --processes`.
 */
export async function prepareDatabase(db: DatabaseHandle['db'], config: Config, logger: Logger, announce: boolean): Promise<void> {
  const applied = await migrateToLatest(db);
  if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
  // Signing keys: any still stored in clear are sealed now, and the current one must open with the
  // configured key-encryption key. A database copied without that key refuses to start here.
  const keys = new KeyStore(db, config.appEnv, keyEncryptionOf(config));
  const sealed = await keys.sealClearKeys();
  if (sealed) logger.info({ sealed }, 'signing keys stored in clear were encrypted at rest');
  await keys.signingKey();
  if (config.appEnv !== 'sandbox') return;
  const boot = await bootstrapSandbox(db, { dataDir: config.dataDir, publicBaseUrl: config.publicBaseUrl });
  if (!announce || !boot.credentials) return;
  if (boot.created) {
    process.stdout.write(
      `\nDemo developer created. Credentials (also in ${boot.credentialsFile}):\n` +
        `  developer_id:   ${boot.credentials.developer_id}\n` +
        `  client_id:      ${boot.credentials.client_id}\n` +
        `  client_secret:  ${boot.credentials.client_secret}\n` +
        `  user_client_id: ${boot.credentials.user_client_id}\n\n`,
    );
    if (boot.practiceAdmin) {
      process.stdout.write(
        `Demo practice admin created: sign in to the practice workspace (also in ${boot.practiceAdminFile}):\n` +
          `  workspace: ${boot.practiceAdmin.workspace_url}\n` +
          `  practice:  ${boot.practiceAdmin.practice_name} (${boot.practiceAdmin.practice_id})\n` +
          `  e-mail:    ${boot.practiceAdmin.email}\n` +
          `  password:  ${boot.practiceAdmin.password}\n\n`,
      );
    }
  } else {
    process.stdout.write(`Demo credentials: ${boot.credentialsFile}\n`);
    if (boot.practiceAdmin) process.stdout.write(`Demo practice admin: ${boot.practiceAdminFile}\n`);
  }
}
