/**
 * Every environment variable the service reads, in one TypeBox schema: its type, range, default and
 * description. `loadConfig` (src/config.ts) parses, coerces and validates the environment with it,
 * `carebook config --help` lists it, and `carebook config` prints the effective values from it.
 *
 * Annotations beyond JSON Schema (Ajv ignores them):
 * - `x-field`: the `Config` field the variable sets (what `carebook config` shows when it is unset);
 * - `x-default`: a default that depends on other variables, in words (no JSON Schema `default`);
 * - `x-secret`: `'value'` (never printed) or `'password'` (a URL whose password is never printed);
 * - `x-error-message`: what a bad value must be, when the schema's own words would not say it.
 *
 * An empty variable counts as unset. Rules across variables (ADMIN_PORT differs from PORT, the
 * production minimum of ADMIN_TOKEN, KEY_ENCRYPTION_KEY or its _FILE but not both, DATABASE_REPLICA_URL
 * only in production on PostgreSQL) are checked by
 * `loadConfig` and stated in the descriptions.
 */
import { Type, type Static, type TSchema } from 'typebox';
import type { Config } from './config-type.js';

/** What the annotations of one variable may say (see the module comment). */
export interface VariableNotes {
  description: string;
  'x-field': keyof Config;
  'x-default'?: string;
  'x-secret'?: 'value' | 'password';
  'x-error-message'?: string;
}

/** Ajv formats the schema uses, checked by src/config/parse-variables.ts. */
export const CONFIG_FORMATS = ['absolute-url', 'postgres-url', 'trust-proxy', 'key-32-bytes-base64'] as const;

const port = (description: string, field: keyof Config, extra: object = {}) =>
  Type.Integer({ minimum: 0, maximum: 65535, description, 'x-field': field, ...extra });

/** The environment variables, in the order `carebook config` and README.md's table list them. */
export const configVariables = Type.Object({
  PORT: port('port the service listens on', 'port', { default: 8080 }),
  HOST: Type.String({ default: '127.0.0.1', description: 'interface the service listens on', 'x-field': 'host' }),
  PUBLIC_BASE_URL: Type.Optional(
    Type.String({
      format: 'absolute-url',
      description: '{base_url}, the public address of the API; tokens carry `${PUBLIC_BASE_URL}/` as audience',
      'x-default': 'http://127.0.0.1:${PORT}',
      'x-error-message': 'must be an absolute URL',
      'x-field': 'publicBaseUrl',
    }),
  ),
  AUTH_URL: Type.Optional(
    Type.String({
      format: 'absolute-url',
      description: '{auth_url}; point it elsewhere to use an external OAuth 2 server (tokens are then checked against its JWKS)',
      'x-default': '${PUBLIC_BASE_URL}/auth',
      'x-error-message': 'must be an absolute URL',
      'x-field': 'authUrl',
    }),
  ),
  APP_ENV: Type.Enum(['sandbox', 'production'], { default: 'sandbox', description: 'the environment this process serves (one per process)', 'x-field': 'appEnv' }),
  DATABASE_URL: Type.Optional(
    Type.String({
      format: 'postgres-url',
      description: 'PostgreSQL server (postgres://…); unset means embedded PGlite in DATA_DIR',
      'x-error-message': 'must start with postgres:// or postgresql://',
      'x-secret': 'password',
      'x-field': 'databaseUrl',
    }),
  ),
  PRODUCTION_DATABASE_URL: Type.Optional(
    Type.String({
      format: 'postgres-url',
      description: 'sandbox only: the production deployment\'s own PostgreSQL database, into which granting a console account\'s production request writes its production developer and login (docs/console.md, "Production"); unset: into this database',
      'x-error-message': 'must start with postgres:// or postgresql://',
      'x-secret': 'password',
      'x-field': 'productionDatabaseUrl',
    }),
  ),
  PRODUCTION_PUBLIC_BASE_URL: Type.Optional(
    Type.String({
      format: 'absolute-url',
      description: 'sandbox only: the production deployment\'s PUBLIC_BASE_URL; the console links a granted account to its production console there',
      'x-error-message': 'must be an absolute URL',
      'x-field': 'productionPublicBaseUrl',
    }),
  ),
  DATABASE_REPLICA_URL: Type.Optional(
    Type.String({
      format: 'postgres-url',
      description: 'production on PostgreSQL only: a streaming replica (hot standby) of DATABASE_URL that serves the directory and availability reads while its lag is within DATABASE_REPLICA_MAX_LAG_MS; every write, and every read of a request that writes, stays on DATABASE_URL (docs/operator-guide.md, "Read replicas")',
      'x-error-message': 'must start with postgres:// or postgresql://',
      'x-secret': 'password',
      'x-field': 'databaseReplicaUrl',
    }),
  ),
  DATABASE_REPLICA_MAX_LAG_MS: Type.Integer({
    // The check runs at most every 50 ms, and a read may see up to one check interval of lag
    // besides: a bound below 100 ms would leave the replica unused most of the time.
    minimum: 100,
    maximum: 600_000,
    default: 1000,
    description: 'how far behind the primary DATABASE_REPLICA_URL may be (measured by WAL position, checked four times per bound and at least once a second) and still serve reads; past it, reads go to DATABASE_URL',
    'x-field': 'databaseReplicaMaxLagMs',
  }),
  DATA_DIR: Type.String({ default: './data', description: 'embedded database, its attachment files and demo credentials', 'x-field': 'dataDir' }),
  ADMIN_TOKEN: Type.Optional(
    Type.String({
      description: 'enables the admin API under /admin/v1 with this bearer token (production: at least 32 characters)',
      'x-secret': 'value',
      'x-field': 'adminToken',
    }),
  ),
  ADMIN_PORT: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 65535, description: 'serve the admin API only on this port (not PORT); the public port then answers /admin with 404', 'x-field': 'adminPort' }),
  ),
  ADMIN_HOST: Type.String({ default: '127.0.0.1', description: 'interface of the ADMIN_PORT listener', 'x-field': 'adminHost' }),
  KEY_ENCRYPTION_KEY: Type.Optional(
    Type.String({
      format: 'key-32-bytes-base64',
      description: '32 random bytes in base64 (openssl rand -base64 32) that encrypt the token-signing keys at rest; required in production on PostgreSQL (not with KEY_ENCRYPTION_KEY_FILE)',
      'x-default': '${DATA_DIR}/key-encryption-key, generated on first start',
      'x-error-message': 'must be 32 random bytes in base64 (e.g. openssl rand -base64 32)',
      'x-secret': 'value',
      'x-field': 'keyEncryptionKey',
    }),
  ),
  KEY_ENCRYPTION_KEY_FILE: Type.Optional(
    Type.String({ description: 'a file holding KEY_ENCRYPTION_KEY (not with KEY_ENCRYPTION_KEY)', 'x-field': 'keyEncryptionKey' }),
  ),
  KEY_ENCRYPTION_KEY_PREVIOUS: Type.Optional(
    Type.String({
      format: 'key-32-bytes-base64',
      description: 'during a key-encryption-key rotation, the old key: still opens signing keys sealed under it until `carebook keys rewrap` has run',
      'x-error-message': 'must be 32 random bytes in base64 (e.g. openssl rand -base64 32)',
      'x-secret': 'value',
      'x-field': 'keyEncryptionKeyPrevious',
    }),
  ),
  RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 10_000_000, default: 1200, description: 'per-credential request limit', 'x-field': 'rateLimitPerMinute' }),
  DATABASE_POOL_SIZE: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 10,
    description: 'PostgreSQL: connections each process keeps open to DATABASE_URL (and as many to DATABASE_REPLICA_URL); requests and background jobs share them, and a request waits for one when all are busy',
    'x-field': 'databasePoolSize',
  }),
  DATABASE_PREPARED_STATEMENTS: Type.Boolean({
    default: true,
    description: 'PostgreSQL: run parameterized statements as prepared statements; false behind a transaction-pooling PgBouncer older than 1.21',
    'x-field': 'preparedStatements',
  }),
  REDIS_URL: Type.Optional(Type.String({ description: 'share rate-limit counters between processes', 'x-secret': 'password', 'x-field': 'redisUrl' })),
  TRUST_PROXY: Type.Optional(
    Type.String({
      format: 'trust-proxy',
      description: 'behind a load balancer: take the client address from X-Forwarded-For of trusted proxies: true (any), a hop count, or a comma list of proxy addresses/CIDRs',
      'x-default': 'false (the peer address is the client)',
      'x-error-message': 'must be true, false, a hop count, or a comma list of IP addresses/CIDRs',
      'x-field': 'trustProxy',
    }),
  ),
  LOG_LEVEL: Type.String({ default: 'info', description: 'pino level (fatal, error, warn, info, debug, trace, silent); logs are JSON lines without patient data', 'x-field': 'logLevel' }),
  SHUTDOWN_GRACE_SECONDS: Type.Integer({ minimum: 0, maximum: 600, default: 10, description: 'how long in-flight requests may finish on SIGTERM', 'x-field': 'shutdownGraceSeconds' }),
  MAX_CONNECTIONS_PER_ADDRESS: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 1_000_000,
      description: 'open connections one client address may hold per process (0: no limit); the next is answered 429 and closed',
      'x-default': '256; 0 when TRUST_PROXY is set',
      'x-field': 'maxConnectionsPerAddress',
    }),
  ),
  REQUEST_TIMEOUT_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 3600,
    default: 60,
    description: "a request's headers and body must all arrive within this time, else 408 and the connection is closed",
    'x-field': 'requestTimeoutSeconds',
  }),
  WEBHOOK_RETRY_BASE_MS: Type.Integer({
    minimum: 10,
    maximum: 3_600_000,
    default: 5000,
    description: 'first webhook retry delay; it doubles per attempt (with jitter) for up to 48 hours',
    'x-field': 'webhookRetryBaseMs',
  }),
  WORKER_POLL_MS: Type.Integer({
    minimum: 10,
    maximum: 60_000,
    default: 1000,
    description: 'how often the booking evaluator and the webhook delivery job look for due work',
    'x-field': 'workerPollMs',
  }),
  ALLOW_PRIVATE_WEBHOOK_TARGETS: Type.Optional(
    Type.Boolean({
      description: 'whether outbound requests (webhooks, the mock delivery) may go to loopback and private addresses (and plain http in production); link-local and metadata addresses are always refused',
      'x-default': 'true for a sandbox listening on a loopback HOST, else false',
      'x-field': 'allowPrivateWebhookTargets',
    }),
  ),
});

/** The variables once parsed: numbers and booleans coerced, defaults filled in. */
export type ConfigVariables = Static<typeof configVariables>;

/** A variable's name. */
export type VariableName = keyof ConfigVariables & string;

/** One variable's schema as JSON Schema keywords, with its annotations. */
export type VariableSchema = TSchema & VariableNotes & Record<string, unknown>;

/** The schema of each variable with its annotations, in order. */
export function variableEntries(): [VariableName, VariableSchema][] {
  return Object.entries(configVariables.properties) as unknown as [VariableName, VariableSchema][];
}
