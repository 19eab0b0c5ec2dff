/** The Practice API's guard and `GET /practice/v1/me` (docs/decisions/0014-practice-workspace.md, "Sign-in", "Scopes"). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeMember } from '../../src/domain/practices/members.js';
import { type SchedulingEnv } from '../appointments/fixtures.js';
import { bearer, userToken } from '../helpers/auth.js';
import { PRACTICE_A, PRACTICE_B, PROVIDER_B, practiceEnv, practiceMember, providerUserToken } from '../helpers/practice.js';

let e: SchedulingEnv;
beforeAll(async () => {
  e = await practiceEnv();
}, 60_000);
afterAll(() => e?.close());

const me = (token?: string, raw?: string) =>
  e.t.app.inject({ url: '/practice/v1/me', headers: raw !== undefined ? { authorization: raw } : token ? bearer(token) : {} });

describe('practice guard', () => {
  it('no token: 401 with a bare challenge and the error body', async () => {
    const res = await me();
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="carebook"');
    expect(res.json()).toMatchObject({ error_type: 'invalid_request', errors: [{ message: expect.stringContaining('bearer') }] });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('malformed and forged tokens: 401 invalid_token', async () => {
    expect((await me(undefined, 'Bearer')).statusCode).toBe(401);
    const forged = await me('eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln');
    expect(forged.statusCode).toBe(401);
    expect(forged.headers['www-authenticate']).toMatch(/error="invalid_token"/);
  });

  it('a patient token of a developer app: 401', async () => {
    const token = await userToken(e.t, e.dev, { email: 'patient-guard@example.org', password: 'patient-pass-1' });
    expect((await e.t.app.inject({ url: '/v1/appointments', headers: bearer(token) })).statusCode).toBe(200);
    const res = await me(token);
    expect(res.statusCode).toBe(401);
  });

  it('a developer client-credentials token: 401', async () => {
    expect((await me(e.token)).statusCode).toBe(401);
  });

  it('a staff token is refused by /v1', async () => {
    const admin = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_admin' });
    const res = await e.t.app.inject({ url: '/v1/appointments', headers: bearer(admin.token) });
    expect(res.statusCode).toBe(401);
  });

  it('a provider user token of the workspace is refused by /v1', async () => {
    const p = await providerUserToken(e.t, 'pr_ny');
    const res = await e.t.app.inject({ url: '/v1/providers/pr_ny/calendar/timeslots?date=2030-01-01', headers: bearer(p.token) });
    expect(res.statusCode).toBe(401);
  });

  it('a removed member: 401 at once, with the token families revoked', async () => {
    const admin = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_admin' });
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    expect((await me(staff.token)).statusCode).toBe(200);
    await removeMember(e.t.db, e.t.config.appEnv, PRACTICE_A, staff.userId);
    expect((await me(staff.token)).statusCode).toBe(401);
    const live = await e.t.db.selectFrom('token_families').select('id').where('user_id', '=', staff.userId).where('revoked_at', 'is', null).execute();
    expect(live).toEqual([]);
    expect((await me(admin.token)).statusCode).toBe(200);
  });

  it('a token without practice.read: 403 insufficient_scope', async () => {
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff', scopes: ['practice.write'] });
    const res = await me(staff.token);
    expect(res.statusCode).toBe(403);
    expect(res.headers['www-authenticate']).toMatch(/insufficient_scope/);
  });

  it('counts calls per staff user against the rate limit', async () => {
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    const a = await me(staff.token);
    const b = await me(staff.token);
    expect(Number(a.headers['ratelimit-remaining'])).toBe(Number(b.headers['ratelimit-remaining']) + 1);
    expect(b.headers['ratelimit-limit']).toBe(String(e.t.config.rateLimitPerMinute));
  });
});

describe('GET /practice/v1/me', () => {
  it('an admin: role, all scopes, the practice and every provider with its provider-locations', async () => {
    const admin = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_admin' });
    const res = await me(admin.token);
    expect(res.statusCode).toBe(200);
    const d = res.json().data;
    expect(d).toMatchObject({ user_id: admin.userId, email: admin.email, role: 'practice_admin', practice: { id: PRACTICE_A, name: 'Test practice' } });
    expect(d.scopes).toEqual(['practice.admin', 'practice.read', 'practice.write']);
    expect(d.providers.map((p: { provider_id: string }) => p.provider_id).sort()).toEqual(['pr_hnl', 'pr_man', 'pr_ny', 'pr_ny2', 'pr_phx']);
    const ny = d.providers.find((p: { provider_id: string }) => p.provider_id === 'pr_ny');
    expect(ny.provider_locations).toEqual([
      { provider_location_id: 'pr_ny|lo_ny', location_id: 'lo_ny', location_name: 'Clinic lo_ny', time_zone: 'America/New_York', confirmation_type: 'auto' },
      { provider_location_id: 'pr_ny|lo_ny_b', location_id: 'lo_ny_b', location_name: 'Clinic lo_ny_b', time_zone: 'America/New_York', confirmation_type: 'auto' },
    ]);
    const man = d.providers.find((p: { provider_id: string }) => p.provider_id === 'pr_man');
    expect(man.provider_locations[0].confirmation_type).toBe('manual');
    expect(JSON.stringify(d)).not.toContain(PROVIDER_B);
  });

  it('a staff member: practice.admin capped away even when the token asked for it', async () => {
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_B, role: 'practice_staff' });
    const d = (await me(staff.token)).json().data;
    expect(d.role).toBe('practice_staff');
    expect(d.scopes).toEqual(['practice.read', 'practice.write']);
    expect(d.practice).toEqual({ id: PRACTICE_B, name: 'Second practice' });
    expect(d.providers.map((p: { provider_id: string }) => p.provider_id)).toEqual([PROVIDER_B]);
  });

  it('a provider user: their own provider only, practice.read only', async () => {
    const p = await providerUserToken(e.t, 'pr_ny2');
    const res = await me(p.token);
    expect(res.statusCode).toBe(200);
    const d = res.json().data;
    expect(d).toMatchObject({ role: 'provider', practice: { id: PRACTICE_A }, scopes: ['practice.read'] });
    expect(d.providers.map((x: { provider_id: string }) => x.provider_id)).toEqual(['pr_ny2']);
  });
});
