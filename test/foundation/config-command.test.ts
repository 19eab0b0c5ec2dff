/**
 * `carebook config --help` and `carebook config`, run as the operator runs them: every variable of
 * the schema is listed with its type and default, and secrets never reach the output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configVariables } from '../../src/config/variables.js';

const BIN = join(import.meta.dirname, '../../bin/carebook.mjs');
const NAMES = Object.keys(configVariables.properties);

/** Runs `carebook ...args` with exactly `env` (and PATH/HOME); the child is killed whatever happens. */
async function carebook(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let child: ChildProcess | undefined;
  try {
    child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child!.once('error', reject);
      child!.once('close', resolve);
    });
    return { code, stdout, stderr };
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

const ADMIN_TOKEN = 'admin-token-that-must-not-be-printed-0123';
const KEY = Buffer.alloc(32, 3).toString('base64');
const PREVIOUS = Buffer.alloc(32, 4).toString('base64');
const DB_PASSWORD = 'db-password-not-printed';
const REDIS_PASSWORD = 'redis-password-not-printed';

describe('carebook config', () => {
  it('--help lists every variable with its type and default', async () => {
    const { code, stdout } = await carebook(['config', '--help'], {});
    expect(code).toBe(0);
    for (const name of NAMES) expect(stdout, name).toMatch(new RegExp(`^  ${name}  \\(.+; default: .+\\)$`, 'm'));
    expect(stdout).toMatch(/^ {2}PORT {2}\(integer 0\.\.65535; default: 8080\)\n {6}port the service listens on$/m);
    expect(stdout).toMatch(/^ {2}ADMIN_TOKEN {2}\(text; default: unset; secret\)$/m);
    expect(stdout).toMatch(/^ {2}APP_ENV {2}\(sandbox \| production; default: sandbox\)$/m);
  });

  it('prints the effective value of every variable, secrets masked', async () => {
    const env = {
      PORT: '9090',
      ADMIN_TOKEN,
      KEY_ENCRYPTION_KEY: KEY,
      KEY_ENCRYPTION_KEY_PREVIOUS: PREVIOUS,
      DATABASE_URL: `postgres://carebook:${DB_PASSWORD}@db.internal:5432/carebook`,
      REDIS_URL: `redis://:${REDIS_PASSWORD}@cache.internal:6379`,
    };
    const { code, stdout, stderr } = await carebook(['config'], env);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = new Map(stdout.trim().split('\n').map((l) => [l.split(/\s+/)[0]!, l.split(/\s+/).slice(1).join(' ')]));
    expect([...lines.keys()]).toEqual(NAMES);
    expect(lines.get('PORT')).toBe('9090');
    expect(lines.get('PUBLIC_BASE_URL')).toBe('http://127.0.0.1:9090 (default)');
    expect(lines.get('ADMIN_PORT')).toBe('unset');
    expect(lines.get('ADMIN_TOKEN')).toBe('********');
    expect(lines.get('KEY_ENCRYPTION_KEY')).toBe('********');
    expect(lines.get('DATABASE_URL')).toBe('postgres://carebook:********@db.internal:5432/carebook');
    expect(lines.get('REDIS_URL')).toBe('redis://:********@cache.internal:6379');
    for (const secret of [ADMIN_TOKEN, KEY, PREVIOUS, DB_PASSWORD, REDIS_PASSWORD]) expect(stdout).not.toContain(secret);

    const json = await carebook(['config', '--json'], env);
    const values = JSON.parse(json.stdout) as Record<string, { value: unknown; source: string }>;
    expect(Object.keys(values)).toEqual(NAMES);
    expect(values.PORT).toEqual({ value: 9090, source: 'environment' });
    expect(values.ADMIN_TOKEN).toEqual({ value: '********', source: 'environment' });
    expect(values.RATE_LIMIT_PER_MINUTE).toEqual({ value: 1200, source: 'default' });
    expect(values.KEY_ENCRYPTION_KEY_FILE).toEqual({ value: null, source: 'default' });
    for (const secret of [ADMIN_TOKEN, KEY, PREVIOUS, DB_PASSWORD, REDIS_PASSWORD]) expect(json.stdout).not.toContain(secret);
  });

  it('says which variables are wrong and exits 1', async () => {
    const { code, stdout, stderr } = await carebook(['config'], { PORT: 'eighty', KEY_ENCRYPTION_KEY: 'not-a-key-and-not-printed' });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('PORT must be an integer from 0 to 65535, got "eighty"');
    expect(stderr).toContain('KEY_ENCRYPTION_KEY must be 32 random bytes in base64');
    expect(stderr).not.toContain('not-a-key-and-not-printed');
  });
});
