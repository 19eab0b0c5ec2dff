/**
 * The configuration: parsed, coerced and validated from the one schema of src/config/variables.ts,
 * which must know every environment variable the sources read.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { configVariables, variableEntries } from '../../src/config/variables.js';
import { variablesRead } from '../helpers/env-reads.js';

const KEY = Buffer.alloc(32, 7);
const OLD_KEY = Buffer.alloc(32, 9);

/** The message `loadConfig(env)` throws (a `ConfigError`). */
function errorOf(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error(`no error for ${JSON.stringify(env)}`);
}

describe('configuration', () => {
  it('has a default for everything: a sandbox on the embedded database', () => {
    expect(loadConfig({})).toEqual({
      port: 8080,
      host: '127.0.0.1',
      publicBaseUrl: 'http://127.0.0.1:8080',
      authUrl: 'http://127.0.0.1:8080/auth',
      audience: 'http://127.0.0.1:8080/',
      appEnv: 'sandbox',
      databaseUrl: undefined,
      databaseReplicaUrl: undefined,
      databaseReplicaMaxLagMs: 1000,
      databasePoolSize: 10,
      preparedStatements: true,
      dataDir: './data',
      adminToken: undefined,
      adminPort: undefined,
      adminHost: '127.0.0.1',
      rateLimitPerMinute: 1200,
      redisUrl: undefined,
      logLevel: 'info',
      trustProxy: false,
      allowPrivateWebhookTargets: true,
      shutdownGraceSeconds: 10,
      requestTimeoutSeconds: 60,
      maxConnectionsPerAddress: 256,
      webhookRetryBaseMs: 5000,
      workerPollMs: 1000,
      keyEncryptionKey: undefined,
      keyEncryptionKeyPrevious: undefined,
    });
  });

  it('reads every variable, coercing numbers and booleans, and treats an empty one as unset', () => {
    const config = loadConfig({
      PORT: ' 9000 ',
      HOST: '0.0.0.0',
      PUBLIC_BASE_URL: 'https://api.example.test/',
      AUTH_URL: 'https://login.example.test//',
      APP_ENV: 'production',
      DATABASE_URL: 'postgresql://u:p@db/carebook',
      DATA_DIR: '/var/lib/carebook',
      ADMIN_TOKEN: 'a'.repeat(32),
      ADMIN_PORT: '9001',
      ADMIN_HOST: '10.0.0.5',
      KEY_ENCRYPTION_KEY: KEY.toString('base64'),
      KEY_ENCRYPTION_KEY_PREVIOUS: ` ${OLD_KEY.toString('base64')}\n`,
      RATE_LIMIT_PER_MINUTE: '60',
      DATABASE_PREPARED_STATEMENTS: 'false',
      DATABASE_POOL_SIZE: '25',
      REDIS_URL: 'redis://cache:6379',
      TRUST_PROXY: '2',
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_SECONDS: '0',
      MAX_CONNECTIONS_PER_ADDRESS: '7',
      REQUEST_TIMEOUT_SECONDS: '5',
      WEBHOOK_RETRY_BASE_MS: '10',
      WORKER_POLL_MS: '60000',
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      SOMETHING_ELSE: 'ignored',
    });
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      publicBaseUrl: 'https://api.example.test',
      audience: 'https://api.example.test/',
      authUrl: 'https://login.example.test',
      appEnv: 'production',
      databaseUrl: 'postgresql://u:p@db/carebook',
      preparedStatements: false,
      databasePoolSize: 25,
      dataDir: '/var/lib/carebook',
      adminToken: 'a'.repeat(32),
      adminPort: 9001,
      adminHost: '10.0.0.5',
      rateLimitPerMinute: 60,
      redisUrl: 'redis://cache:6379',
      logLevel: 'warn',
      trustProxy: 2,
      allowPrivateWebhookTargets: true,
      shutdownGraceSeconds: 0,
      requestTimeoutSeconds: 5,
      maxConnectionsPerAddress: 7,
      webhookRetryBaseMs: 10,
      workerPollMs: 60000,
    });
    expect(config.keyEncryptionKey?.equals(KEY)).toBe(true);
    expect(config.keyEncryptionKeyPrevious?.equals(OLD_KEY)).toBe(true);
    const empty = Object.fromEntries(Object.keys(configVariables.properties).map((n) => [n, '']));
    expect(loadConfig(empty)).toEqual(loadConfig({}));
  });

  it('derives the defaults that depend on other variables', () => {
    expect(loadConfig({ PORT: '3000' })).toMatchObject({ publicBaseUrl: 'http://127.0.0.1:3000', authUrl: 'http://127.0.0.1:3000/auth' });
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://x.test/base/' }).authUrl).toBe('https://x.test/base/auth');
    expect(loadConfig({ TRUST_PROXY: 'false' }).maxConnectionsPerAddress).toBe(0);
    expect(loadConfig({ HOST: '0.0.0.0' }).allowPrivateWebhookTargets).toBe(false);
    expect(loadConfig({ APP_ENV: 'production' }).allowPrivateWebhookTargets).toBe(false);
    expect(loadConfig({ HOST: '[::1]' }).allowPrivateWebhookTargets).toBe(true);
  });

  it('names the variable, what it must be and the value given', () => {
    const cases: [Record<string, string>, string][] = [
      [{ PORT: 'eighty' }, 'PORT must be an integer from 0 to 65535, got "eighty"'],
      [{ PORT: '1.5' }, 'PORT must be an integer from 0 to 65535, got "1.5"'],
      [{ PORT: '65536' }, 'PORT must be an integer from 0 to 65535, got "65536"'],
      [{ ADMIN_PORT: '0' }, 'ADMIN_PORT must be an integer from 1 to 65535, got "0"'],
      [{ APP_ENV: 'staging' }, 'APP_ENV must be "sandbox" or "production", got "staging"'],
      [{ PUBLIC_BASE_URL: 'api.example.test' }, 'PUBLIC_BASE_URL must be an absolute URL, got "api.example.test"'],
      [{ AUTH_URL: '/auth' }, 'AUTH_URL must be an absolute URL, got "/auth"'],
      [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE must be an integer from 1 to 1000, got "0"'],
      [{ DATABASE_PREPARED_STATEMENTS: 'yes' }, 'DATABASE_PREPARED_STATEMENTS must be true or false, got "yes"'],
      [{ ALLOW_PRIVATE_WEBHOOK_TARGETS: '1' }, 'ALLOW_PRIVATE_WEBHOOK_TARGETS must be true or false, got "1"'],
      [{ TRUST_PROXY: '101' }, 'TRUST_PROXY must be true, false, a hop count, or a comma list of IP addresses/CIDRs, got "101"'],
      [{ WORKER_POLL_MS: '5' }, 'WORKER_POLL_MS must be an integer from 10 to 60000, got "5"'],
    ];
    for (const [env, message] of cases) expect(errorOf(env)).toBe(message);
  });

  it('reports every bad variable at once', () => {
    const message = errorOf({ PORT: 'x', APP_ENV: 'y', SHUTDOWN_GRACE_SECONDS: '-1' });
    expect(message.split('; ').map((m) => m.split(' ')[0]).sort()).toEqual(['APP_ENV', 'PORT', 'SHUTDOWN_GRACE_SECONDS']);
  });

  it('never repeats a secret in a message', () => {
    const password = 'hunter2-do-not-print';
    for (const [env, name] of [
      [{ DATABASE_URL: `mysql://u:${password}@db/x` }, 'DATABASE_URL'],
      [{ KEY_ENCRYPTION_KEY: `${password}=` }, 'KEY_ENCRYPTION_KEY'],
      [{ KEY_ENCRYPTION_KEY_PREVIOUS: `${password}=` }, 'KEY_ENCRYPTION_KEY_PREVIOUS'],
    ] as const) {
      const message = errorOf(env);
      expect(message.startsWith(`${name} must`)).toBe(true);
      expect(message).not.toContain(password);
    }
  });

  it('checks the rules across variables', async () => {
    expect(errorOf({ PORT: '9000', ADMIN_PORT: '9000' })).toBe('ADMIN_PORT must differ from PORT');
    expect(errorOf({ APP_ENV: 'production', ADMIN_TOKEN: 'short' })).toMatch(/^ADMIN_TOKEN must be at least 32 characters in production/);
    const dir = await mkdtemp(join(tmpdir(), 'carebook-config-'));
    try {
      const file = join(dir, 'kek');
      await writeFile(file, `${KEY.toString('base64')}\n`);
      expect(loadConfig({ KEY_ENCRYPTION_KEY_FILE: file }).keyEncryptionKey?.equals(KEY)).toBe(true);
      expect(errorOf({ KEY_ENCRYPTION_KEY_FILE: file, KEY_ENCRYPTION_KEY: KEY.toString('base64') })).toBe('set KEY_ENCRYPTION_KEY or KEY_ENCRYPTION_KEY_FILE, not both');
      await writeFile(file, 'c2hvcnQ=');
      expect(errorOf({ KEY_ENCRYPTION_KEY_FILE: file })).toBe('KEY_ENCRYPTION_KEY_FILE must be 32 random bytes in base64 (e.g. openssl rand -base64 32)');
      expect(errorOf({ KEY_ENCRYPTION_KEY_FILE: join(dir, 'missing') })).toMatch(/^KEY_ENCRYPTION_KEY_FILE could not be read/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('configuration schema', () => {
  it('has every environment variable the sources read', async () => {
    const known = new Set(Object.keys(configVariables.properties));
    const read = await variablesRead();
    expect(read.size).toBeGreaterThan(0);
    const unknown = [...read].filter(([name]) => !known.has(name)).map(([name, files]) => `${name} (${files.join(', ')})`);
    expect(unknown, 'add these to src/config/variables.ts').toEqual([]);
  });

  it('describes every variable, says its default and names the Config field it sets', () => {
    const fields = Object.keys(loadConfig({}));
    for (const [name, schema] of variableEntries()) {
      expect(schema.description, name).toMatch(/\w/);
      expect(fields, name).toContain(schema['x-field']);
      // A default is a value, a rule in words, or "unset" (an optional variable that turns something off).
      const optional = !(configVariables.required as string[] | undefined)?.includes(name);
      expect(schema.default !== undefined || schema['x-default'] !== undefined || optional, name).toBe(true);
      expect(schema.default !== undefined && optional, `${name}: a default but optional`).toBe(false);
    }
  });
});
