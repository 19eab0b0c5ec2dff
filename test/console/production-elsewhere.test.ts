/**
 * Production on its own database (docs/console.md, "Production"; docs/decisions/0015-developer-console.md,
 * "Production in its own database"): with `PRODUCTION_DATABASE_URL`, the sandbox deployment's grant
 * writes the production developer and a console login into the production deployment's database;
 * the account signs in there with the same password, reads its secret once and calls `/v1` of the
 * production deployment. Both engines for the domain (two databases); the HTTP journey on
 * PostgreSQL, since the target is named by a PostgreSQL URL.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantProduction, productionDeveloperId } from '../../src/domain/console/production-grant.js';
import { loadConfig } from '../../src/config.js';
import { bearer, clientToken } from '../helpers/auth.js';
import { consoleTokens, newConsoleAccount } from '../helpers/console.js';
import { freshDatabase, testDatabaseUrl, type TestDatabase } from '../helpers/db.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { scaled } from '../helpers/scale.js';

const ADMIN = { authorization: 'Bearer test-admin-token-0123456789abcdefgh' };
let sandbox: TestApp;
beforeAll(async () => {
  sandbox = await testApp();
}, 120_000);
afterAll(() => sandbox?.close());

const ask = (t: TestApp, token: string, company: string) =>
  t.app.inject({ method: 'POST', url: '/console/v1/production-request', headers: bearer(token), payload: { company, use_case: 'Booking for members' } });

describe('the grant into another database', () => {
  let prod: TestDatabase;
  beforeAll(async () => {
    prod = await freshDatabase();
  }, 120_000);
  afterAll(() => prod?.close());

  it('writes the login (same address and password hash) and the production developer there, nothing here; a repeat after a lost commit here writes nothing twice', async () => {
    const a = await newConsoleAccount(sandbox, '10.6.0.1');
    const id = (await ask(sandbox, a.token, 'Elsewhere Health')).json().data.id as string;
    const target = { db: prod.db, consoleUrl: 'https://api.example.org/console' };
    const granted = await grantProduction(sandbox.db, 'sandbox', id, target);
    expect(granted).toMatchObject({ status: 'granted', production_developer_id: productionDeveloperId(id), production_console_url: 'https://api.example.org/console' });

    const here = await sandbox.db.selectFrom('users').select(['email', 'password_hash']).where('id', '=', a.userId).executeTakeFirstOrThrow();
    const login = await prod.db.selectFrom('users').selectAll().where('email', '=', a.email).executeTakeFirstOrThrow();
    expect(login).toMatchObject({ env: 'production', role: 'developer', password_hash: here.password_hash, id: a.userId });
    const dev = await prod.db.selectFrom('developers').selectAll().where('id', '=', granted.production_developer_id!).executeTakeFirstOrThrow();
    expect(dev).toMatchObject({ env: 'production', name: 'Elsewhere Health' });
    expect(await prod.db.selectFrom('developer_members').select('user_id').where('developer_id', '=', dev.id).execute()).toEqual([{ user_id: a.userId }]);
    const app = await prod.db.selectFrom('apps').select(['id', 'developer_id']).where('id', '=', granted.app_id).executeTakeFirstOrThrow();
    expect(app.developer_id).toBe(dev.id);
    const machine = await prod.db.selectFrom('oauth_clients').select(['secret_reveal_pending', 'kind']).where('app_id', '=', app.id).where('kind', '=', 'confidential').executeTakeFirstOrThrow();
    expect(machine.secret_reveal_pending).toBe(true);
    expect(await sandbox.db.selectFrom('developers').select('id').where('id', '=', dev.id).execute()).toEqual([]);

    // The commit here lost (as if this process died between the two commits): granting again finds what is there.
    await sandbox.db.updateTable('production_requests').set({ status: 'pending', decided_at: null, production_developer_id: null }).where('id', '=', id).execute();
    const again = await grantProduction(sandbox.db, 'sandbox', id, target);
    expect(again).toMatchObject({ status: 'granted', production_developer_id: dev.id, app_id: granted.app_id });
    expect(Number((await prod.db.selectFrom('developers').select((eb) => eb.fn.countAll().as('n')).where('id', '=', dev.id).executeTakeFirstOrThrow()).n)).toBe(1);
    expect(Number((await prod.db.selectFrom('apps').select((eb) => eb.fn.countAll().as('n')).where('developer_id', '=', dev.id).executeTakeFirstOrThrow()).n)).toBe(1);
    expect(Number((await prod.db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).where('email', '=', a.email).executeTakeFirstOrThrow()).n)).toBe(1);
  });

  it('joins a console login the account already has there; refuses when the address has another kind of login there', async () => {
    const b = await newConsoleAccount(sandbox, '10.6.0.2');
    await prod.db.insertInto('users').values({ id: 'us_prod_own_login', env: 'production', email: b.email.toUpperCase(), password_hash: 'x', role: 'developer', provider_id: null }).execute();
    const id = (await ask(sandbox, b.token, 'Joined Health')).json().data.id as string;
    const g = await grantProduction(sandbox.db, 'sandbox', id, { db: prod.db, consoleUrl: undefined });
    expect(g.production_console_url).toBeNull();
    expect(await prod.db.selectFrom('developer_members').select('user_id').where('developer_id', '=', g.production_developer_id!).execute()).toEqual([{ user_id: 'us_prod_own_login' }]);

    const c = await newConsoleAccount(sandbox, '10.6.0.3');
    await prod.db.insertInto('users').values({ id: 'us_prod_patient', env: 'production', email: c.email, password_hash: 'x', role: 'patient', provider_id: null }).execute();
    const cid = (await ask(sandbox, c.token, 'Patient Health')).json().data.id as string;
    await expect(grantProduction(sandbox.db, 'sandbox', cid, { db: prod.db, consoleUrl: undefined })).rejects.toMatchObject({ kind: 'conflict' });
    expect((await sandbox.db.selectFrom('production_requests').select('status').where('id', '=', cid).executeTakeFirstOrThrow()).status).toBe('pending');
  });
});

describe('PRODUCTION_DATABASE_URL', () => {
  it('belongs to the sandbox deployment: a production deployment refuses it', () => {
    expect(() => loadConfig({ APP_ENV: 'production', PRODUCTION_DATABASE_URL: 'postgres://db/prod' })).toThrow(/sandbox deployment/);
    expect(() => loadConfig({ PRODUCTION_DATABASE_URL: 'mysql://db/prod' })).toThrow(/PRODUCTION_DATABASE_URL/);
  });

  it('a production database that cannot be reached: 503, the request stays pending, nothing is written', async () => {
    const t = await testApp({ PRODUCTION_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    try {
      const a = await newConsoleAccount(t, '10.6.0.4');
      const id = (await ask(t, a.token, 'Unreachable Health')).json().data.id as string;
      const res = await t.app.inject({ method: 'POST', url: `/admin/v1/production-requests/${id}/grant`, headers: ADMIN });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().errors[0].message).toMatch(/production database could not be written.*still pending/);
      expect((await t.db.selectFrom('production_requests').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status).toBe('pending');
    } finally {
      await t.close();
    }
  }, scaled(120_000));

  it.runIf(testDatabaseUrl)('on PostgreSQL, end to end: granted in the sandbox, the account signs in to the production deployment, reads its secret once and calls /v1 there', async () => {
    const production = await testApp({ APP_ENV: 'production' });
    const productionUrl = schemaUrl((production.handle as TestDatabase).schema!);
    const t = await testApp({ PRODUCTION_DATABASE_URL: productionUrl, PRODUCTION_PUBLIC_BASE_URL: production.config.publicBaseUrl });
    try {
      const a = await newConsoleAccount(t, '10.6.0.5');
      const id = (await ask(t, a.token, 'Deployed Health')).json().data.id as string;
      const res = await t.app.inject({ method: 'POST', url: `/admin/v1/production-requests/${id}/grant`, headers: ADMIN });
      expect(res.statusCode, res.body).toBe(200);
      const g = res.json().data;
      expect(g.production_console_url).toBe(`${production.config.publicBaseUrl}/console`);
      const me = (await t.app.inject({ url: '/console/v1/me', headers: bearer(a.token) })).json().data;
      expect(me.production).toMatchObject({ status: 'granted', console_url: `${production.config.publicBaseUrl}/console` });
      expect(me.developers.map((d: { env: string }) => d.env)).toEqual(['sandbox']);

      // On the production deployment: the same e-mail address and password sign in to its console.
      const { access_token } = await consoleTokens(production, { email: a.email, password: a.password });
      const pme = (await production.app.inject({ url: '/console/v1/me', headers: bearer(access_token) })).json().data;
      expect(pme.developers).toEqual([expect.objectContaining({ developer_id: g.production_developer_id, env: 'production', name: 'Deployed Health' })]);
      const appRes = await production.app.inject({ url: `/console/v1/apps/${g.app_id}`, headers: bearer(access_token) });
      expect(appRes.statusCode, appRes.body).toBe(200);
      const machine = appRes.json().data.clients.find((c: { kind: string }) => c.kind === 'machine');
      expect(machine.client_secret).toEqual(expect.any(String));
      const second = (await production.app.inject({ url: `/console/v1/apps/${g.app_id}`, headers: bearer(access_token) })).json().data;
      expect(second.clients.find((c: { kind: string }) => c.kind === 'machine').client_secret).toBeUndefined();
      // The secret works against the production deployment's /v1.
      const token = await clientToken(production, { developer_id: g.production_developer_id, client_id: machine.client_id, client_secret: machine.client_secret, user_client_id: '' });
      const v1 = await production.app.inject({ url: '/v1/appointments', headers: bearer(token) });
      expect(v1.statusCode, v1.body).toBe(200);
      // The sandbox console token is not accepted there.
      expect((await production.app.inject({ url: '/console/v1/me', headers: bearer(a.token) })).statusCode).toBe(401);

      // The CLI, run where both databases are reachable, grants the same way.
      const b = await newConsoleAccount(t, '10.6.0.6');
      const bid = (await ask(t, b.token, 'CLI Deployed')).json().data.id as string;
      const env = { PATH: process.env.PATH!, DATABASE_URL: schemaUrl((t.handle as TestDatabase).schema!), PRODUCTION_DATABASE_URL: productionUrl, KEY_ENCRYPTION_KEY: t.config.keyEncryptionKey?.toString('base64') ?? '' };
      const { stdout } = await promisify(execFile)(process.execPath, [join(import.meta.dirname, '../../bin/carebook.mjs'), 'developer', 'grant-production', bid], { env, timeout: scaled(60_000) });
      expect(stdout).toContain(`request ${bid} granted to ${b.email}`);
      const bdev = await production.db.selectFrom('developers').select('env').where('id', '=', productionDeveloperId(bid)).executeTakeFirstOrThrow();
      expect(bdev.env).toBe('production');
    } finally {
      await t.close();
      await production.close();
    }
  }, scaled(180_000));
});

/** The test PostgreSQL URL with `schema` first on the search path. */
function schemaUrl(schema: string): string {
  const u = new URL(testDatabaseUrl!);
  u.searchParams.set('options', `-c search_path="${schema}",public`);
  return u.toString();
}
