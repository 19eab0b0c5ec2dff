/**
 * The Console API guard (docs/auth.md, "Console accounts and sign-in"): only live tokens of role
 * `developer` issued to the developer console client; `/v1` and `/practice/v1` refuse console tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SchedulingEnv } from '../appointments/fixtures.js';
import { bearer, clientToken, userToken } from '../helpers/auth.js';
import { consoleTokens, newConsoleAccount, type ConsoleLogin } from '../helpers/console.js';
import { PRACTICE_A, practiceEnv, practiceMember } from '../helpers/practice.js';

let e: SchedulingEnv;
let a: ConsoleLogin;
beforeAll(async () => {
  e = await practiceEnv();
  a = await newConsoleAccount(e.t, '10.4.0.1');
}, 120_000);
afterAll(() => e?.close());

const me = (headers: Record<string, string> = {}) => e.t.app.inject({ url: '/console/v1/me', headers });

describe('the console guard', () => {
  it('GET /me: the account, its sandbox developer, no production access yet', async () => {
    const res = await me(bearer(a.token));
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ user_id: a.userId, email: a.email, developers: [{ developer_id: a.developerId, env: 'sandbox', name: a.email }], production: { status: 'none', request_id: null } });
  });

  it('401 without a token (bare challenge) and with a malformed or forged one (invalid_token)', async () => {
    const none = await me();
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(none.headers['www-authenticate']).not.toContain('invalid_token');
    const forged = await me(bearer(`${a.token.slice(0, -4)}AAAA`));
    expect(forged.statusCode).toBe(401);
    expect(forged.headers['www-authenticate']).toContain('invalid_token');
    expect((await me({ authorization: 'Bearer' })).statusCode).toBe(401);
  });

  it('401 for a machine credential, a patient, a practice staff member', async () => {
    expect((await me(bearer(await clientToken(e.t, e.dev)))).statusCode).toBe(401);
    const patient = await userToken(e.t, e.dev, { email: 'guard-patient@example.org', password: 'patient-pass-1' });
    expect((await me(bearer(patient))).statusCode).toBe(401);
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_admin' });
    expect((await me(bearer(staff.token))).statusCode).toBe(401);
  });

  it('/v1 and /practice/v1 refuse a console token', async () => {
    const v1 = await e.t.app.inject({ url: '/v1/appointments', headers: bearer(a.token) });
    expect(v1.statusCode).toBe(401);
    expect(v1.headers['www-authenticate']).toContain('invalid_token');
    expect((await e.t.app.inject({ url: '/practice/v1/me', headers: bearer(a.token) })).statusCode).toBe(401);
  });

  it('a revoked token family is refused at once', async () => {
    const tokens = await consoleTokens(e.t, a);
    expect((await me(bearer(tokens.access_token))).statusCode).toBe(200);
    const fid = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString()).fid as string;
    await e.t.db.updateTable('token_families').set({ revoked_at: new Date() }).where('id', '=', fid).execute();
    expect((await me(bearer(tokens.access_token))).statusCode).toBe(401);
    expect((await me(bearer(a.token))).statusCode).toBe(200);
  });

  it('a deleted account\'s token is refused', async () => {
    const gone = await newConsoleAccount(e.t, '10.4.0.2');
    expect((await me(bearer(gone.token))).statusCode).toBe(200);
    await e.t.db.deleteFrom('users').where('id', '=', gone.userId).execute();
    expect((await me(bearer(gone.token))).statusCode).toBe(401);
  });

  it('counts calls against the account\'s rate limit (RateLimit headers, as the practice guard)', async () => {
    const res = await me(bearer(a.token));
    const names = Object.keys(res.headers).map((h) => h.toLowerCase());
    expect(names.some((h) => h.startsWith('ratelimit') || h.startsWith('x-ratelimit'))).toBe(true);
  });
});
