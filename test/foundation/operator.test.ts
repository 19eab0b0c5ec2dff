import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapSandbox } from '../../src/domain/demo/bootstrap.js';
import { SANDBOX_FIXTURE_IDS } from '../../src/domain/directory/sandbox-fixtures.js';
import { isValidNpi } from '../../src/domain/directory/npi.js';
import { generateDirectory } from '../../src/domain/directory/seed.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';
import { workspaceToken } from '../helpers/practice.js';

/** The practice workspace's system developer (src/domain/practices/workspace-client.ts) is not a developer of the demo. */
const SYSTEM_DEVELOPERS = 'dv\\_system\\_%';

const admin = { authorization: 'Bearer test-admin-token-0123456789abcdefgh' };

describe('operator: admin API, seed and the sandbox bootstrap', () => {
  let t: TestApp;
  let dataDir: string;
  beforeAll(async () => {
    t = await testApp();
    dataDir = await mkdtemp(join(tmpdir(), 'carebook-boot-'));
  });
  afterAll(async () => {
    await t.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates a developer whose credentials work at the token endpoint', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/v1/developers', headers: admin, payload: { name: 'Acme Health', redirect_uris: ['https://acme.example/cb'] } });
    expect(res.statusCode).toBe(201);
    const dev = res.json();
    expect(Object.keys(dev).sort()).toEqual(['client_id', 'client_secret', 'developer_id', 'user_client_id']);
    expect(await clientToken(t, dev)).toMatch(/^ey/);
    const stored = await t.db.selectFrom('oauth_clients').select(['secret_hash', 'kind', 'redirect_uris']).where('developer_id', '=', dev.developer_id).orderBy('kind').execute();
    expect(stored[0]!.secret_hash).not.toContain(dev.client_secret);
    expect(stored[1]).toMatchObject({ kind: 'public', secret_hash: null, redirect_uris: ['https://acme.example/cb'] });
  });

  it('refuses a bad redirect URI naming the field', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/v1/developers', headers: admin, payload: { name: 'x', redirect_uris: ['javascript:alert(1)'] } });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].field).toBe('redirect_uris[0]');
  });

  it('creates users: patients, providers tied to a provider, and refuses duplicates and bad input', async () => {
    const seeded = await t.app.inject({ method: 'POST', url: '/admin/v1/directory/seed', headers: admin, payload: { providers: 5, seed: 3 } });
    expect(seeded.statusCode).toBe(200);
    expect(seeded.json().providers).toBe(5);
    const patient = await t.app.inject({ method: 'POST', url: '/admin/v1/users', headers: admin, payload: { email: 'pat@example.org', password: 'correct horse battery', role: 'patient' } });
    expect(patient.statusCode).toBe(201);
    const dup = await t.app.inject({ method: 'POST', url: '/admin/v1/users', headers: admin, payload: { email: 'PAT@example.org', password: 'another password', role: 'patient' } });
    expect(dup.statusCode).toBe(400);
    expect(dup.json().errors[0].field).toBe('email');
    const noProvider = await t.app.inject({ method: 'POST', url: '/admin/v1/users', headers: admin, payload: { email: 'doc@example.org', password: 'correct horse battery', role: 'provider', provider_id: 'pr_missing' } });
    expect(noProvider.json().errors[0].field).toBe('provider_id');
    const provider = await t.app.inject({ method: 'POST', url: '/admin/v1/users', headers: admin, payload: { email: 'doc@example.org', password: 'correct horse battery', role: 'provider', provider_id: 'pr_3_0' } });
    expect(provider.statusCode).toBe(201);
    const row = await t.db.selectFrom('users').select('password_hash').where('email', '=', 'pat@example.org').executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    const short = await t.app.inject({ method: 'POST', url: '/admin/v1/users', headers: admin, payload: { email: 'x@example.org', password: 'short', role: 'patient' } });
    expect(short.json().errors[0].field).toBe('password');
  });

  it('seeds a deterministic, realistic directory and is idempotent', async () => {
    const a = generateDirectory(40, 11);
    expect(generateDirectory(40, 11)).toEqual(a);
    expect(generateDirectory(40, 12)).not.toEqual(a);
    expect(a.providers!.every((p) => isValidNpi(p.npi))).toBe(true);
    expect(a.locations!.every((l) => /^[A-Z]{2}$/.test(l.state) && l.time_zone.includes('/'))).toBe(true);
    const types = new Set(a.provider_locations!.map((p) => p.confirmation_type));
    expect(types).toEqual(new Set(['auto', 'manual']));
    const again = await t.app.inject({ method: 'POST', url: '/admin/v1/directory/seed', headers: admin, payload: { providers: 5, seed: 3 } });
    expect(again.json()).toMatchObject({ added: 0, removed: 0, profile_updated: 0 });
    const unknownDev = await t.app.inject({ method: 'POST', url: '/admin/v1/directory/seed', headers: admin, payload: { providers: 1, developer_id: 'dv_none' } });
    expect(unknownDev.statusCode).toBe(404);
  });

  it('bootstraps the sandbox once: demo developer, directory, fixtures, credentials file readable by its owner only', async () => {
    const first = await bootstrapSandbox(t.db, { dataDir, publicBaseUrl: t.config.publicBaseUrl, demoProviders: 10 });
    // The test app already has developers, so the first bootstrap here only refreshes fixtures.
    expect(first.created).toBe(false);
    const fresh = await testApp();
    try {
      const boot = await bootstrapSandbox(fresh.db, { dataDir, publicBaseUrl: fresh.config.publicBaseUrl, demoProviders: 10 });
      expect(boot.created).toBe(true);
      const file = JSON.parse(await readFile(join(dataDir, 'demo-credentials.json'), 'utf8'));
      expect(file).toEqual(boot.credentials);
      expect((await stat(join(dataDir, 'demo-credentials.json'))).mode & 0o777).toBe(0o600);
      expect(await clientToken(fresh, boot.credentials!)).toMatch(/^ey/);
      // The demo practice's admin signs in to the practice workspace with the printed password.
      const admin = boot.practiceAdmin!;
      expect(JSON.parse(await readFile(join(dataDir, 'demo-practice-admin.json'), 'utf8'))).toEqual(admin);
      expect((await stat(join(dataDir, 'demo-practice-admin.json'))).mode & 0o777).toBe(0o600);
      const me = await fresh.app.inject({ url: '/practice/v1/me', headers: bearer(await workspaceToken(fresh, admin)) });
      expect(me.json().data).toMatchObject({ email: admin.email, role: 'practice_admin', practice: { id: admin.practice_id, name: admin.practice_name } });
      const designated = await fresh.db.selectFrom('developer_provider_locations').select('provider_location_id').where('developer_id', '=', boot.credentials!.developer_id).execute();
      const ids = designated.map((d) => d.provider_location_id);
      expect(ids).toEqual(expect.arrayContaining(SANDBOX_FIXTURE_IDS));
      expect(ids.length).toBeGreaterThan(10);
      const again = await bootstrapSandbox(fresh.db, { dataDir, publicBaseUrl: fresh.config.publicBaseUrl, demoProviders: 10 });
      expect(again.created).toBe(false);
      expect(again.credentials).toEqual(boot.credentials);
      expect(again.practiceAdmin).toEqual(boot.practiceAdmin);
      const devs = await fresh.db.selectFrom('developers').select('id').where('id', 'not like', SYSTEM_DEVELOPERS).execute();
      expect(devs).toHaveLength(1);
    } finally {
      await fresh.close();
    }
  });
  it('bootstraps atomically: a failure writing the credentials file leaves no demo developer, and the next start creates it', async () => {
    const fresh = await testApp();
    const dir = await mkdtemp(join(tmpdir(), 'carebook-boot-fail-'));
    try {
      // A directory where the credentials file should go: writing the file fails after the developer
      // and the directory have been written (as a crash or a full disk at that point would).
      await mkdir(join(dir, 'demo-credentials.json'));
      await expect(bootstrapSandbox(fresh.db, { dataDir: dir, publicBaseUrl: fresh.config.publicBaseUrl, demoProviders: 5 })).rejects.toThrow();
      expect(await fresh.db.selectFrom('developers').select('id').where('id', 'not like', SYSTEM_DEVELOPERS).execute()).toHaveLength(0);
      expect(await fresh.db.selectFrom('oauth_clients').select('client_id').where('developer_id', 'not like', SYSTEM_DEVELOPERS).execute()).toHaveLength(0);
      expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
      // The next start (the obstacle gone) creates the demo, with working credentials on disk.
      await rm(join(dir, 'demo-credentials.json'), { recursive: true });
      const boot = await bootstrapSandbox(fresh.db, { dataDir: dir, publicBaseUrl: fresh.config.publicBaseUrl, demoProviders: 5 });
      expect(boot.created).toBe(true);
      expect(JSON.parse(await readFile(join(dir, 'demo-credentials.json'), 'utf8'))).toEqual(boot.credentials);
      expect((await stat(join(dir, 'demo-credentials.json'))).mode & 0o777).toBe(0o600);
      expect(await clientToken(fresh, boot.credentials!)).toMatch(/^ey/);
    } finally {
      await fresh.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('bootstraps one demo when two processes start together on one database', async () => {
    const fresh = await testApp();
    const dir = await mkdtemp(join(tmpdir(), 'carebook-boot-race-'));
    try {
      const opts = { dataDir: dir, publicBaseUrl: fresh.config.publicBaseUrl, demoProviders: 5 };
      const [a, b] = await Promise.all([bootstrapSandbox(fresh.db, opts), bootstrapSandbox(fresh.db, opts)]);
      expect([a.created, b.created].sort()).toEqual([false, true]);
      expect(a.credentials).toEqual(b.credentials);
      expect(await fresh.db.selectFrom('developers').select('id').where('id', 'not like', SYSTEM_DEVELOPERS).execute()).toHaveLength(1);
    } finally {
      await fresh.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
