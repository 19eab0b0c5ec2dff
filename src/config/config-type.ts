/**
 * The configuration every part of the service is given (`loadConfig`, src/config.ts, builds it from
 * the environment variables of src/config/variables.ts). A file of its own so that the variables'
 * schema can name `Config` fields without importing the loader (no import cycle).
 */
import type { Env } from '../db/schema.js';

/**
 * Which proxies may set the client address through `X-Forwarded-For` (Fastify `trustProxy`):
 * `false` (the peer address is the client), `true` (any proxy), a hop count, or addresses/CIDRs.
 */
export type TrustProxy = boolean | number | string[];

export interface Config {
  port: number;
  host: string;
  /** `{base_url}`: the public address of the API, without a trailing slash. */
  publicBaseUrl: string;
  /** `{auth_url}`: the public address of the auth server, without a trailing slash. */
  authUrl: string;
  /** The audience every access token of this environment carries: `${publicBaseUrl}/`. */
  audience: string;
  appEnv: Env;
  /** PostgreSQL URL; unset means embedded PGlite in `dataDir`. */
  databaseUrl: string | undefined;
  /** Sandbox only: the production deployment's own database, where production grants are written (docs/console.md, "Production"). */
  productionDatabaseUrl: string | undefined;
  /** Sandbox only: the production deployment's public address, for the console's link to it. */
  productionPublicBaseUrl: string | undefined;
  /**
   * `DATABASE_REPLICA_URL`: a streaming replica of `databaseUrl` for the directory and availability
   * reads of production (docs/decisions/0020-read-replicas.md); unset: every read on `databaseUrl`.
   */
  databaseReplicaUrl: string | undefined;
  /** `DATABASE_REPLICA_MAX_LAG_MS`: the replica serves reads only while it is at most this far behind (ms). */
  databaseReplicaMaxLagMs: number;
  /** `DATABASE_POOL_SIZE`: PostgreSQL connections a process keeps to `databaseUrl` (and to the replica), default 10. */
  databasePoolSize: number;
  /** Run parameterized statements as prepared statements on PostgreSQL (`DATABASE_PREPARED_STATEMENTS`, default true). */
  preparedStatements: boolean;
  dataDir: string;
  /** Bearer token of the admin API; unset turns the admin API off. */
  adminToken: string | undefined;
  /**
   * `ADMIN_PORT`: when set, the admin API is served only on this port (on `ADMIN_HOST`, default
   * 127.0.0.1) and nothing else is; the public port answers `/admin` with 404.
   */
  adminPort: number | undefined;
  /** `ADMIN_HOST`: the interface of the admin listener (default 127.0.0.1). */
  adminHost: string;
  rateLimitPerMinute: number;
  redisUrl: string | undefined;
  logLevel: string;
  /** `TRUST_PROXY`: whose `X-Forwarded-For` gives the client address (rate limits per address). */
  trustProxy: TrustProxy;
  /** Outbound requests may go to private/loopback addresses (and plain HTTP in production); see `allowPrivateTargets`. */
  allowPrivateWebhookTargets: boolean;
  /** Seconds to let in-flight requests finish on shutdown. */
  shutdownGraceSeconds: number;
  /** `REQUEST_TIMEOUT_SECONDS`: the whole request (headers and body) must arrive within this time, else 408. */
  requestTimeoutSeconds: number;
  /**
   * `MAX_CONNECTIONS_PER_ADDRESS`: open connections one client address may hold; more are refused
   * (0: no limit). Default 256, or 0 behind a trusted proxy (every connection comes from it; the
   * load balancer bounds each client instead).
   */
  maxConnectionsPerAddress: number;
  /** First webhook retry delay in ms; doubles per attempt (docs/api/webhooks.md). */
  webhookRetryBaseMs: number;
  /** How often background workers look for due work, in ms. */
  workerPollMs: number;
  /**
   * `KEY_ENCRYPTION_KEY` or the contents of `KEY_ENCRYPTION_KEY_FILE`: 32 bytes that seal the
   * token-signing keys at rest; unset, a starting service uses `${DATA_DIR}/key-encryption-key`
   * (src/auth/key-encryption.ts).
   */
  keyEncryptionKey: Buffer | undefined;
  /** `KEY_ENCRYPTION_KEY_PREVIOUS`: during a KEK rotation, the old KEK, which still opens keys sealed under it. */
  keyEncryptionKeyPrevious: Buffer | undefined;
}
