/**
 * Builds the Fastify application: plugins, error model, health, docs, and the route areas. All
 * dependencies come in through `AppDeps`; nothing here is a module-level singleton.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ChangeSignal } from '../lib/change-signal.js';
import { loggableError } from '../lib/loggable-error.js';
import { RequestLogBuffer } from '../domain/request-log/buffer.js';
import { installRequestLog } from './request-log.js';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db, PoolStats } from '../db/database.js';
import type { ReplicaState } from '../db/replica-state.js';
import type { BookingOutcomePolicy } from '../domain/appointments/outcome-policy.js';
import type { TokenVerifier } from '../domain/credentials/principal.js';
import { sandboxBookingOutcomes } from '../domain/sandbox/booking-outcomes.js';
import type { JobHandles } from '../jobs/registry.js';
import { databaseAttachmentStore } from '../domain/attachments/database-store.js';
import type { AttachmentStore } from '../domain/attachments/store.js';
import { authServer } from '../auth/index.js';
import { keyEncryptionOf } from '../auth/key-encryption.js';
import { KeyStore } from '../auth/signing-keys.js';
import { authServerIsLocal, createAccessTokenReader, createTokenVerifier } from '../auth/token-verifier.js';
import { createConsoleTokenVerifier } from '../auth/console-token.js';
import { createPracticeTokenVerifier } from '../auth/practice-token.js';
import { ensureConsoleClient } from '../domain/console/console-client.js';
import { consoleRoutes } from '../routes/console/index.js';
import { consolePageRoutes } from '../routes/console-pages/index.js';
import { makeConsoleGuard } from './console-guard.js';
import { ensureWorkspaceClient } from '../domain/practices/workspace-client.js';
import { practiceRoutes } from '../routes/practice/index.js';
import { invitationPageRoutes } from '../routes/practice/invitation-page.js';
import { adminRoutes } from '../routes/admin/index.js';
import { credentialRoutes } from '../routes/v1/credentials/index.js';
import { directoryRoutes } from '../routes/v1/directory/index.js';
import { appointmentRoutes } from '../routes/v1/appointments/index.js';
import { availabilityRoutes } from '../routes/v1/availability/index.js';
import { KeptSchedules } from '../domain/availability/kept-schedules.js';
import { calendarRoutes } from '../routes/v1/calendar/index.js';
import { webhookRoutes } from '../routes/v1/webhooks/index.js';
import { attachmentRoutes } from '../routes/v1/attachments/index.js';
import { demoRoutes } from '../routes/demo/index.js';
import { practiceWorkspaceRoutes } from '../routes/practice-workspace/index.js';
import { makeGuard } from './auth-guard.js';
import { makePracticeGuard } from './practice-guard.js';
import { installIdempotency } from './idempotency.js';
import { installOnePassValidation } from './one-pass-validation.js';
import { limitConnectionsPerAddress } from './connection-limit.js';
import { splitAdminPort } from './admin-listener.js';
import { installJsonBodyParser } from './json-body.js';
import { createRateLimiter } from './rate-limit.js';
import { installErrorHandlers, sendError } from './error-handler.js';
import { healthRoutes } from './health.js';
import { loggerOptions } from './logger.js';
import { lazyRequestLogger } from './request-logger.js';
import { installMetrics } from './metrics.js';
import { installOpenApi } from './openapi.js';
import { requestIdGenerator } from './request-id.js';
import { validatorCompiler } from './validators.js';

export interface AppDeps {
  config: Config;
  db: Db;
  /** Verifies `/v1` bearer tokens; by default the JWKS verifier of `src/auth`. */
  tokenVerifier?: TokenVerifier;
  /** A pino logger; by default one is made from `config.logLevel`. */
  logger?: Logger;
  /**
   * The background jobs running in this process (src/jobs/registry.ts), if any: the insurance-mapping
   * route kicks its job right after each accepted request, and `/metrics` shows their counters. None
   * for an API process without background jobs (`serve --no-workers`): the `carebook worker`
   * processes apply the requests on their next pass (docs/api/deployment.md#scale-out).
   */
  jobs?: JobHandles;
  /** Outcomes forced on bookings and reschedules; by default the sandbox fixtures' (src/domain/sandbox/booking-outcomes.ts). */
  bookingOutcomes?: BookingOutcomePolicy;
  /** How often a practice's live events stream reads the outbox (ms); default 500 (docs/decisions/0014-practice-workspace.md, "Live calendar"). */
  practiceEventPollMs?: number;
  /**
   * Where attachment bytes live (docs/decisions/0016-attachment-files.md): `attachmentStoreFor` gives
   * files under `${DATA_DIR}/attachments` on the embedded engine; by default the database row.
   */
  attachments?: AttachmentStore;
  /**
   * The read replica of a production deployment (`DATABASE_REPLICA_URL`, src/db/replica.ts): its
   * reads handle serves the directory and availability reads; its state shows in `/readyz` and
   * `/metrics`. Every other statement goes to `db` (docs/decisions/0020-read-replicas.md).
   */
  replica?: { reads: Db; state: ReplicaState };
  /** PostgreSQL: the connection pool's counts, shown in `/metrics` (`DatabaseHandle.poolStats`). */
  poolStats?: () => PoolStats;
  /** The availability endpoint's kept schedule data (src/domain/availability/kept-schedules.ts); by default a new one of the default size. */
  keptSchedules?: KeptSchedules;
}

/** Fastify `trustProxy` for a hop count: the first `hops` addresses from the socket are proxies. */
function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

/** Fastify's and Node's request-time limits for a whole-request budget of `seconds`. */
function requestTimeouts(seconds: number): { requestTimeout: number; http: { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number } } {
  const ms = seconds * 1000;
  return { requestTimeout: ms, http: { requestTimeout: ms, headersTimeout: Math.min(ms, 60_000), connectionsCheckingInterval: Math.min(5_000, Math.max(250, ms / 4)) } };
}

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };
/** Whether `log` writes lines of `level` (pino's numeric order; `silent` writes none). */
const logs = (log: FastifyBaseLogger, level: 'debug' | 'info'): boolean => (LEVELS[log.level] ?? Infinity) <= LEVELS[level]!;

/** Builds the application (docs/api/README.md, docs/api/deployment.md#configuration). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, db } = deps;
  // Directory and availability reads: on the replica in production when there is one (it falls back
  // to the primary by itself). A sandbox reads from the primary, so that a developer's own writes
  // show at once (docs/decisions/0020-read-replicas.md, "The sandbox").
  const reads = deps.replica && config.appEnv === 'production' ? deps.replica.reads : db;
  const attachments = deps.attachments ?? databaseAttachmentStore();
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger as unknown as FastifyBaseLogger } : { logger: loggerOptions(config.logLevel) }),
    genReqId: requestIdGenerator(),
    // request.log: a child logger made only when the request logs more than its one line (request-logger.ts).
    childLoggerFactory: lazyRequestLogger,
    // TRUST_PROXY: read the client address (request.ip) from X-Forwarded-For of trusted proxies, so
    // per-address limits (docs/api/conventions.md#rate-limits) key on the caller, not the load balancer. The auth server
    // is a plugin of this instance and inherits it.
    // A hop count becomes a function, as Fastify does at run time (its types omit numbers).
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    // One line per request (written below when the answer is sent); the incoming line only at debug.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    // Idle keep-alive sockets close at once; busy ones get the grace period (see preClose below).
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    bodyLimit: 1024 * 1024,
    // A request (headers and body) must arrive within REQUEST_TIMEOUT_SECONDS, or Node answers 408
    // and closes the connection: a client sending a body a byte at a time cannot hold a connection
    // (and a slot of the server) for minutes. Checked every quarter of that time (at most 5 s).
    ...requestTimeouts(config.requestTimeoutSeconds),
    routerOptions: { maxParamLength: 500 },
    // A URL the router cannot decode, or a path parameter over maxParamLength, fails before any hook
    // runs: answer it with the error body too (found by test/security/fuzz.test.ts).
    frameworkErrors: (err, req, reply) => {
      reply.header('x-request-id', req.id).header('x-content-type-options', 'nosniff').header('cache-control', 'no-store');
      const status = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
      const message = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'path parameter too long' : err.code === 'FST_ERR_BAD_URL' ? 'malformed URL' : 'invalid request';
      return sendError(reply, status, 'invalid_request', [{ message }]);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler());
  // One client address holds at most MAX_CONNECTIONS_PER_ADDRESS open connections (per process).
  limitConnectionsPerAddress(app.server, config.maxConnectionsPerAddress);
  // ADMIN_PORT: the admin API only on its own listener (started by `serve`), and only it there.
  if (config.adminPort !== undefined) splitAdminPort(app, config.adminPort);
  installJsonBodyParser(app);
  // Fastify also parses text/plain by default; no route takes it but the directory import (which
  // adds its own parser): any other route answers a text body 415, as /openapi.json documents.
  app.removeContentTypeParser('text/plain');

  // Hooks on every request are callback-style: an async hook costs a promise per request.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    if (req.url.startsWith('/v1') || req.url.startsWith('/admin') || req.url.startsWith('/practice')) reply.header('cache-control', 'no-store');
    done();
  });

  // The request's one log line, when its answer has been sent: method, URL without query values,
  // status and time (docs/operator-guide.md, "Logs"). The incoming line is written only at debug.
  app.addHook('onRequest', (req, _reply, done) => {
    if (logs(req.log, 'debug')) req.log.debug({ req }, 'incoming request');
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    // Through the service's logger, the request id as a field: no per-request child for this line.
    if (logs(app.log, 'info')) app.log.info({ request_id: req.id, req, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    done();
  });

  // Graceful shutdown: in-flight requests get `shutdownGraceSeconds` to finish; then every socket
  // still open (a stalled upload, a slow client) is destroyed so that close() never hangs.
  let forceTimer: NodeJS.Timeout | undefined;
  let closing = false;
  app.addHook('onSend', (_req, reply, payload, done) => {
    // Responses finished during shutdown end their connection instead of keeping it alive.
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('preClose', async () => {
    closing = true;
    forceTimer = setTimeout(() => app.server.closeAllConnections(), config.shutdownGraceSeconds * 1000);
    forceTimer.unref();
  });
  app.addHook('onClose', async () => clearTimeout(forceTimer));

  installErrorHandlers(app);
  const registry = installMetrics(app, { jobs: deps.jobs, replica: deps.replica?.state, poolStats: deps.poolStats });
  await installOpenApi(app, config);
  healthRoutes(app, db, registry, deps.replica?.state);

  const keys = new KeyStore(db, config.appEnv, keyEncryptionOf(config));
  const limiter = createRateLimiter({ db, defaultPerMinute: config.rateLimitPerMinute, redisUrl: config.redisUrl });
  app.addHook('onClose', async () => limiter.close());
  if (authServerIsLocal(config)) {
    await app.register(authServer, { prefix: new URL(config.authUrl).pathname, config, db, keys, limiter });
  }
  // Routes declare the guard as their `onRequest` hook: the token is checked and the call counted
  // against the rate limit before the body is read, parsed and validated, so an unauthenticated
  // caller gets 401 without its body being read, and malformed requests are rate limited too.
  // Every answered call of a developer's credential goes to their request log (docs/api/request-log.md).
  installRequestLog(app, new RequestLogBuffer(db, { onError: (err) => app.log.error({ err: loggableError(err) }, 'request log flush failed') }));
  const reader = createAccessTokenReader({ config, db, keys });
  app.decorate('guard', makeGuard(deps.tokenVerifier ?? createTokenVerifier({ config, db, keys, reader }), limiter));

  // One-pass validation and Idempotency-Key first, so every route registered after them gets them.
  installOnePassValidation(app);
  installIdempotency(app, db);
  // Appointment writes of `/v1` and of the Practice API wake the practice's live event streams (decision 0014, "Live calendar").
  const appointmentChanges = new ChangeSignal();
  await app.register(appointmentRoutes, { config, db, outcomes: deps.bookingOutcomes ?? sandboxBookingOutcomes, onAppointmentChange: () => appointmentChanges.notify() });
  // Schedule data the availability endpoint keeps while its versions hold (docs/scheduling.md, "Kept schedule data").
  await app.register(availabilityRoutes, { config, reads, kept: deps.keptSchedules ?? new KeptSchedules() });
  await app.register(calendarRoutes, { config, db });

  // The Practice API (issue #18, docs/decisions/0014-practice-workspace.md): its own guard and the
  // practice workspace's first-party client, created or refreshed here (its redirect URI follows PUBLIC_BASE_URL).
  await ensureWorkspaceClient(db, config.appEnv, config.publicBaseUrl);
  await app.register(practiceRoutes, {
    prefix: '/practice/v1',
    config,
    db,
    outcomes: deps.bookingOutcomes ?? sandboxBookingOutcomes,
    appointmentChanges,
    ...(deps.practiceEventPollMs ? { eventPollMs: deps.practiceEventPollMs } : {}),
    practiceGuard: makePracticeGuard(createPracticeTokenVerifier({ config, db, reader }), limiter),
  });
  await app.register(invitationPageRoutes, { config, db });

  // The Console API (issue #19, docs/decisions/0015-developer-console.md): its own guard and the
  // developer console's first-party client, created or refreshed here like the workspace's.
  await ensureConsoleClient(db, config.appEnv, config.publicBaseUrl);
  await app.register(consoleRoutes, {
    prefix: '/console/v1',
    config,
    db,
    outcomes: deps.bookingOutcomes ?? sandboxBookingOutcomes,
    attachments,
    consoleGuard: makeConsoleGuard(createConsoleTokenVerifier({ config, db, reader }), limiter),
  });
  // The developer console's page at /console (every environment; it calls only /console/v1).
  await app.register(consolePageRoutes, { config });

  if (config.adminToken) {
    await app.register(adminRoutes, { prefix: '/admin/v1', config: { ...config, adminToken: config.adminToken }, db });
  }

  // Directory and reference operations (issue #4).
  await app.register(directoryRoutes, { config, db, reads, kickInsuranceMappings: deps.jobs?.kicker('insurance-mappings') ?? (() => {}) });

  // Credential operations: anonymous tokens and secret rotation (issue #3).
  await app.register(credentialRoutes, { config, db, keys });

  // Webhooks: the sandbox's mock delivery (issue #5).
  await app.register(webhookRoutes, { config });
  // Appointment attachments (issue #5).
  await app.register(attachmentRoutes, { config, db, attachments });

  // The booking demo at /demo (issue #7): sandbox only, so production answers 404.
  if (config.appEnv === 'sandbox') await app.register(demoRoutes, { config, db });
  // The practice workspace at /practice (issue #18, docs/decisions/0014): every environment.
  await app.register(practiceWorkspaceRoutes, { config });

  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    guard: ReturnType<typeof makeGuard>;
  }
}
