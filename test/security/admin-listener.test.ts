/**
 * A separate admin listener (issue #16 §6; docs/operator-guide.md, "The admin API"): with
 * `ADMIN_PORT` the admin API answers only on that port (loopback by default), the public port
 * answers `/admin/...` with the 404 of an unknown path, the admin port serves nothing but the admin
 * API and health, and both close with the service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../src/config.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { startService } from '../../src/server.js';
import { TEST_KEY_ENCRYPTION_KEY, testPort } from '../helpers/app.js';
import { freshDatabase } from '../helpers/db.js';

const TOKEN = 'test-admin-token-0123456789abcdefgh';

describe('ADMIN_PORT: the admin API on its own listener', () => {
  let handle: DatabaseHandle;
  let service: { url: string; close(): Promise<void> };
  let admin: string;
  beforeAll(async () => {
    handle = await freshDatabase();
    const port = testPort();
    const adminPort = testPort();
    admin = `http://127.0.0.1:${adminPort}`;
    const config = loadConfig({ PORT: String(port), ADMIN_PORT: String(adminPort), ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent', KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY });
    service = await startService(config, { handle, quiet: true, workers: false });
  });
  afterAll(async () => {
    await service?.close();
    await handle?.close();
  });

  const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

  it('serves the admin API on the admin port only', async () => {
    const created = await fetch(`${admin}/admin/v1/developers`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Via the admin port' }) });
    expect(created.status).toBe(201);
    const publicAttempt = await fetch(`${service.url}/admin/v1/developers`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Via the public port' }) });
    expect(publicAttempt.status).toBe(404);
    expect(((await publicAttempt.json()) as { errors: { message: string }[] }).errors[0]!.message).toMatch(/no route/);
    const names = (await handle.db.selectFrom('developers').select('name').execute()).map((d) => d.name);
    expect(names).toContain('Via the admin port');
    expect(names).not.toContain('Via the public port');
  });

  it('the admin port serves nothing but the admin API and health; the public port serves the API', async () => {
    expect((await fetch(`${admin}/v1/specialties`)).status).toBe(404);
    expect((await fetch(`${admin}/openapi.json`)).status).toBe(404);
    expect((await fetch(`${admin}/healthz`)).status).toBe(200);
    expect((await fetch(`${service.url}/v1/specialties`)).status).toBe(401);
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
  });

  it('refuses an admin port equal to the public port', () => {
    expect(() => loadConfig({ PORT: '8080', ADMIN_PORT: '8080' })).toThrow(ConfigError);
  });
});
