/**
 * Service configuration from environment variables. Parsed once at start and passed down
 * explicitly; nothing reads `process.env` elsewhere. Every variable, its type, default and
 * description is in one schema (src/config/variables.ts); this module turns the parsed variables
 * into the `Config` the service uses and checks the rules that span variables.
 */
import { readFileSync } from 'node:fs';
import type { Env } from './db/schema.js';
import type { Config, TrustProxy } from './config/config-type.js';
import { ConfigError, isKey32Base64, parseVariables } from './config/parse-variables.js';

export { ConfigError } from './config/parse-variables.js';

export type { Config, TrustProxy } from './config/config-type.js';

function stripSlash(u: string): string {
  return u.replace(/\/+$/, '');
}

/**
 * Parses `TRUST_PROXY`: unset/`false` trusts nobody, `true` any proxy, an integer that many hops,
 * otherwise a comma list of IP addresses or CIDR ranges of the trusted proxies (already checked by
 * the schema's `trust-proxy` format).
 */
export function parseTrustProxy(raw: string | undefined): TrustProxy {
  const v = (raw ?? '').trim();
  if (v === '' || v === 'false') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) return Number(v);
  return v.split(',').map((x) => x.trim()).filter(Boolean);
}

/**
 * `ALLOW_PRIVATE_WEBHOOK_TARGETS`: whether outbound requests may go to loopback and private
 * addresses (docs/decisions/0005-one-outbound-address-policy.md). `true` or `false` as the operator
 * says; unset, only a sandbox that listens on a loopback address (a developer's own machine, which
 * nobody else can reach) allows them, so the quickstart's local receiver works out of the box while
 * a sandbox served to others never probes its own network.
 */
export function allowPrivateTargets(given: boolean | undefined, appEnv: Env, host: string): boolean {
  if (given !== undefined) return given;
  return isLocalSandbox(appEnv, host);
}

/**
 * A sandbox listening on a loopback address: nobody but the machine's own user reaches it, so what a
 * private webhook receiver answered may be shown (docs/console.md, "Webhooks").
 */
export function isLocalSandbox(appEnv: Env, host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return appEnv === 'sandbox' && (h === 'localhost' || h === '::1' || /^127\./.test(h));
}

/** Shortest `ADMIN_TOKEN` production accepts (a guessable admin token is a full compromise). */
export const MIN_PRODUCTION_ADMIN_TOKEN_LENGTH = 32;

/** A key-encryption key in base64: 32 bytes (the schema checked the variables; a file's contents are checked here). */
function kek(name: string, raw: string): Buffer {
  if (!isKey32Base64(raw)) throw new ConfigError(`${name} must be 32 random bytes in base64 (e.g. openssl rand -base64 32)`);
  return Buffer.from(raw.trim(), 'base64');
}

/** `KEY_ENCRYPTION_KEY` (already checked), or the contents of the file `KEY_ENCRYPTION_KEY_FILE` names. */
function keyEncryptionKey(value: string | undefined, file: string | undefined): Buffer | undefined {
  if (value) return kek('KEY_ENCRYPTION_KEY', value);
  if (!file) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`KEY_ENCRYPTION_KEY_FILE could not be read: ${(e as Error).message}`);
  }
  return kek('KEY_ENCRYPTION_KEY_FILE', text);
}

/**
 * Reads the configuration from environment variables (src/config/variables.ts); throws
 * `ConfigError` naming every variable with a bad value, or the rule across variables broken.
 */
export function loadConfig(vars: Record<string, string | undefined>): Config {
  const v = parseVariables(vars);
  if (v.KEY_ENCRYPTION_KEY && v.KEY_ENCRYPTION_KEY_FILE) throw new ConfigError('set KEY_ENCRYPTION_KEY or KEY_ENCRYPTION_KEY_FILE, not both');
  if (v.ADMIN_PORT !== undefined && v.ADMIN_PORT === v.PORT) throw new ConfigError('ADMIN_PORT must differ from PORT');
  if (v.ADMIN_TOKEN && v.APP_ENV === 'production' && v.ADMIN_TOKEN.length < MIN_PRODUCTION_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError(`ADMIN_TOKEN must be at least ${MIN_PRODUCTION_ADMIN_TOKEN_LENGTH} characters in production (e.g. openssl rand -hex 32)`);
  }
  if (v.APP_ENV === 'production' && (v.PRODUCTION_DATABASE_URL || v.PRODUCTION_PUBLIC_BASE_URL)) {
    throw new ConfigError('PRODUCTION_DATABASE_URL and PRODUCTION_PUBLIC_BASE_URL belong to the sandbox deployment, whose console grants production access');
  }
  if (v.DATABASE_REPLICA_URL && !v.DATABASE_URL) {
    throw new ConfigError('DATABASE_REPLICA_URL needs a PostgreSQL DATABASE_URL (a streaming replica of it); the embedded database has no replicas');
  }
  if (v.DATABASE_REPLICA_URL && v.APP_ENV !== 'production') {
    throw new ConfigError('DATABASE_REPLICA_URL serves production reads only: a sandbox reads its developers\' own writes back at once, from DATABASE_URL (docs/decisions/0020-read-replicas.md)');
  }
  const publicBaseUrl = stripSlash(v.PUBLIC_BASE_URL ?? `http://127.0.0.1:${v.PORT}`);
  const authUrl = stripSlash(v.AUTH_URL ?? `${publicBaseUrl}/auth`);
  return {
    port: v.PORT,
    host: v.HOST,
    publicBaseUrl,
    authUrl,
    audience: `${publicBaseUrl}/`,
    appEnv: v.APP_ENV,
    databaseUrl: v.DATABASE_URL,
    productionDatabaseUrl: v.PRODUCTION_DATABASE_URL,
    productionPublicBaseUrl: v.PRODUCTION_PUBLIC_BASE_URL ? stripSlash(v.PRODUCTION_PUBLIC_BASE_URL) : undefined,
    preparedStatements: v.DATABASE_PREPARED_STATEMENTS,
    databasePoolSize: v.DATABASE_POOL_SIZE,
    databaseReplicaUrl: v.DATABASE_REPLICA_URL,
    databaseReplicaMaxLagMs: v.DATABASE_REPLICA_MAX_LAG_MS,
    dataDir: v.DATA_DIR,
    adminToken: v.ADMIN_TOKEN,
    adminPort: v.ADMIN_PORT,
    adminHost: v.ADMIN_HOST,
    rateLimitPerMinute: v.RATE_LIMIT_PER_MINUTE,
    redisUrl: v.REDIS_URL,
    logLevel: v.LOG_LEVEL,
    trustProxy: parseTrustProxy(v.TRUST_PROXY),
    allowPrivateWebhookTargets: allowPrivateTargets(v.ALLOW_PRIVATE_WEBHOOK_TARGETS, v.APP_ENV, v.HOST),
    shutdownGraceSeconds: v.SHUTDOWN_GRACE_SECONDS,
    requestTimeoutSeconds: v.REQUEST_TIMEOUT_SECONDS,
    maxConnectionsPerAddress: v.MAX_CONNECTIONS_PER_ADDRESS ?? (v.TRUST_PROXY !== undefined ? 0 : 256),
    webhookRetryBaseMs: v.WEBHOOK_RETRY_BASE_MS,
    workerPollMs: v.WORKER_POLL_MS,
    keyEncryptionKey: keyEncryptionKey(v.KEY_ENCRYPTION_KEY, v.KEY_ENCRYPTION_KEY_FILE),
    keyEncryptionKeyPrevious: v.KEY_ENCRYPTION_KEY_PREVIOUS ? kek('KEY_ENCRYPTION_KEY_PREVIOUS', v.KEY_ENCRYPTION_KEY_PREVIOUS) : undefined,
  };
}
