/**
 * Service configuration from environment variables (contracts.md §1). Parsed once at start and passed
 * down explicitly; nothing reads `process.env` elsewhere.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { Env } from './db/schema.js';

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
  /** First webhook retry delay in ms; doubles per attempt (contracts.md §7). */
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

export class ConfigError extends Error {}

function int(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

function stripSlash(u: string): string {
  return u.replace(/\/+$/, '');
}

function isAddressOrCidr(v: string): boolean {
  const [addr, bits, ...rest] = v.split('/');
  if (rest.length || !addr) return false;
  const family = isIP(addr);
  if (!family) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * Parses `TRUST_PROXY`: unset/`false` trusts nobody, `true` any proxy, an integer that many hops,
 * otherwise a comma list of IP addresses or CIDR ranges of the trusted proxies.
 */
export function parseTrustProxy(raw: string | undefined): TrustProxy {
  const v = (raw ?? '').trim();
  if (v === '' || v === 'false') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) return int('TRUST_PROXY', v, 0, 0, 100);
  const list = v.split(',').map((x) => x.trim()).filter(Boolean);
  const bad = list.find((x) => !isAddressOrCidr(x));
  if (bad !== undefined || !list.length) {
    throw new ConfigError(`TRUST_PROXY must be true, false, a hop count, or a comma list of IP addresses/CIDRs, got ${JSON.stringify(raw)}`);
  }
  return list;
}

/**
 * `ALLOW_PRIVATE_WEBHOOK_TARGETS`: whether outbound requests may go to loopback and private
 * addresses (docs/decisions/0005-one-outbound-address-policy.md). `true` or `false` as the operator
 * says; unset, only a sandbox that listens on a loopback address (a developer's own machine, which
 * nobody else can reach) allows them, so the quickstart's local receiver works out of the box while
 * a sandbox served to others never probes its own network.
 */
export function allowPrivateTargets(raw: string | undefined, appEnv: Env, host: string): boolean {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw !== undefined && raw !== '') throw new ConfigError(`ALLOW_PRIVATE_WEBHOOK_TARGETS must be true or false, got ${JSON.stringify(raw)}`);
  const h = host.replace(/^\[|\]$/g, '');
  return appEnv === 'sandbox' && (h === 'localhost' || h === '::1' || /^127\./.test(h));
}

/** Shortest `ADMIN_TOKEN` production accepts (a guessable admin token is a full compromise). */
export const MIN_PRODUCTION_ADMIN_TOKEN_LENGTH = 32;

/** `ADMIN_TOKEN`: unset turns the admin API off; production refuses one shorter than 32 characters. */
function adminToken(raw: string | undefined, appEnv: Env): string | undefined {
  if (!raw) return undefined;
  if (appEnv === 'production' && raw.length < MIN_PRODUCTION_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError(`ADMIN_TOKEN must be at least ${MIN_PRODUCTION_ADMIN_TOKEN_LENGTH} characters in production (e.g. openssl rand -hex 32)`);
  }
  return raw;
}

/** `ADMIN_PORT`: a port other than `PORT`, or unset. */
function adminPort(raw: string | undefined, port: number): number | undefined {
  if (!raw) return undefined;
  const value = int('ADMIN_PORT', raw, 0, 1, 65535);
  if (value === port) throw new ConfigError('ADMIN_PORT must differ from PORT');
  return value;
}

/** A key-encryption key in base64: 32 bytes. */
function kek(name: string, raw: string): Buffer {
  const key = Buffer.from(raw.trim(), 'base64');
  if (key.length !== 32) throw new ConfigError(`${name} must be 32 random bytes in base64 (e.g. openssl rand -base64 32)`);
  return key;
}

/** `KEY_ENCRYPTION_KEY`, or the contents of the file `KEY_ENCRYPTION_KEY_FILE` names (not both). */
function keyEncryptionKey(vars: Record<string, string | undefined>): Buffer | undefined {
  if (vars.KEY_ENCRYPTION_KEY && vars.KEY_ENCRYPTION_KEY_FILE) throw new ConfigError('set KEY_ENCRYPTION_KEY or KEY_ENCRYPTION_KEY_FILE, not both');
  if (vars.KEY_ENCRYPTION_KEY) return kek('KEY_ENCRYPTION_KEY', vars.KEY_ENCRYPTION_KEY);
  if (!vars.KEY_ENCRYPTION_KEY_FILE) return undefined;
  let text: string;
  try {
    text = readFileSync(vars.KEY_ENCRYPTION_KEY_FILE, 'utf8');
  } catch (e) {
    throw new ConfigError(`KEY_ENCRYPTION_KEY_FILE could not be read: ${(e as Error).message}`);
  }
  return kek('KEY_ENCRYPTION_KEY_FILE', text);
}

/** Reads the configuration; throws `ConfigError` naming the variable on a bad value. */
export function loadConfig(vars: Record<string, string | undefined>): Config {
  const port = int('PORT', vars.PORT, 8080, 0, 65535);
  const host = vars.HOST || '127.0.0.1';
  const appEnv = (vars.APP_ENV || 'sandbox') as Env;
  if (appEnv !== 'sandbox' && appEnv !== 'production') {
    throw new ConfigError(`APP_ENV must be "sandbox" or "production", got ${JSON.stringify(vars.APP_ENV)}`);
  }
  const publicBaseUrl = stripSlash(vars.PUBLIC_BASE_URL || `http://127.0.0.1:${port}`);
  const authUrl = stripSlash(vars.AUTH_URL || `${publicBaseUrl}/auth`);
  for (const [name, value] of [['PUBLIC_BASE_URL', publicBaseUrl], ['AUTH_URL', authUrl]] as const) {
    try {
      new URL(value);
    } catch {
      throw new ConfigError(`${name} must be an absolute URL, got ${JSON.stringify(value)}`);
    }
  }
  const databaseUrl = vars.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const prepared = vars.DATABASE_PREPARED_STATEMENTS ?? 'true';
  if (prepared !== 'true' && prepared !== 'false') throw new ConfigError('DATABASE_PREPARED_STATEMENTS must be true or false');
  return {
    port,
    host,
    publicBaseUrl,
    authUrl,
    audience: `${publicBaseUrl}/`,
    appEnv,
    databaseUrl,
    preparedStatements: prepared === 'true',
    dataDir: vars.DATA_DIR || './data',
    adminToken: adminToken(vars.ADMIN_TOKEN, appEnv),
    adminPort: adminPort(vars.ADMIN_PORT, port),
    adminHost: vars.ADMIN_HOST || '127.0.0.1',
    rateLimitPerMinute: int('RATE_LIMIT_PER_MINUTE', vars.RATE_LIMIT_PER_MINUTE, 1200, 1, 10_000_000),
    redisUrl: vars.REDIS_URL || undefined,
    logLevel: vars.LOG_LEVEL || 'info',
    trustProxy: parseTrustProxy(vars.TRUST_PROXY),
    allowPrivateWebhookTargets: allowPrivateTargets(vars.ALLOW_PRIVATE_WEBHOOK_TARGETS, appEnv, host),
    shutdownGraceSeconds: int('SHUTDOWN_GRACE_SECONDS', vars.SHUTDOWN_GRACE_SECONDS, 10, 0, 600),
    requestTimeoutSeconds: int('REQUEST_TIMEOUT_SECONDS', vars.REQUEST_TIMEOUT_SECONDS, 60, 1, 3600),
    maxConnectionsPerAddress: int('MAX_CONNECTIONS_PER_ADDRESS', vars.MAX_CONNECTIONS_PER_ADDRESS, vars.TRUST_PROXY ? 0 : 256, 0, 1_000_000),
    webhookRetryBaseMs: int('WEBHOOK_RETRY_BASE_MS', vars.WEBHOOK_RETRY_BASE_MS, 5000, 10, 3_600_000),
    workerPollMs: int('WORKER_POLL_MS', vars.WORKER_POLL_MS, 1000, 10, 60_000),
    keyEncryptionKey: keyEncryptionKey(vars),
    keyEncryptionKeyPrevious: vars.KEY_ENCRYPTION_KEY_PREVIOUS ? kek('KEY_ENCRYPTION_KEY_PREVIOUS', vars.KEY_ENCRYPTION_KEY_PREVIOUS) : undefined,
  };
}
