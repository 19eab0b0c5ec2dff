/** `/practice/v1/staff` (docs/auth.md, "Practice accounts and sign-in"): list, invite, remove; practice admins only; isolation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SchedulingEnv } from '../appointments/fixtures.js';
import { bearer } from '../helpers/auth.js';
import { PRACTICE_A, PRACTICE_B, practiceEnv, practiceMember, providerUserToken, type PracticeLogin } from '../helpers/practice.js';

let e: SchedulingEnv;
let adminA: PracticeLogin;
let adminB: PracticeLogin;
beforeAll(async () => {
  e = await practiceEnv();
  adminA = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_admin' });
  adminB = await practiceMember(e.t, { practiceId: PRACTICE_B, role: 'practice_admin' });
}, 60_000);
afterAll(() => e?.close());

const list = (token: string) => e.t.app.inject({ url: '/practice/v1/staff', headers: bearer(token) });
const invite = (token: string, payload: unknown) => e.t.app.inject({ method: 'POST', url: '/practice/v1/staff', headers: bearer(token), payload: payload as object });
const remove = (token: string, userId: string) => e.t.app.inject({ method: 'DELETE', url: `/practice/v1/staff/${encodeURIComponent(userId)}`, headers: bearer(token) });

describe('GET /practice/v1/staff', () => {
  it('lists the members of the admin\'s own practice only', async () => {
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    const res = await list(adminA.token);
    expect(res.statusCode).toBe(200);
    const ids = res.json().data.map((m: { user_id: string }) => m.user_id);
    expect(ids).toContain(adminA.userId);
    expect(ids).toContain(staff.userId);
    expect(ids).not.toContain(adminB.userId);
    const me = res.json().data.find((m: { user_id: string }) => m.user_id === adminA.userId);
    expect(me).toEqual({ user_id: adminA.userId, email: adminA.email, role: 'practice_admin', created_at: expect.any(String) });
    expect((await list(adminB.token)).json().data.map((m: { user_id: string }) => m.user_id)).toEqual([adminB.userId]);
  });

  it('no token 401; a staff member 403; a provider user 403; an admin token without practice.admin 403', async () => {
    expect((await e.t.app.inject({ url: '/practice/v1/staff' })).statusCode).toBe(401);
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    const res = await list(staff.token);
    expect(res.statusCode).toBe(403);
    expect(res.headers['www-authenticate']).toContain('scope="practice.admin"');
    expect((await list((await providerUserToken(e.t, 'pr_ny')).token)).statusCode).toBe(403);
    const narrow = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_admin', scopes: ['practice.read'] });
    expect((await list(narrow.token)).statusCode).toBe(403);
  });
});

describe('POST /practice/v1/staff', () => {
  it('answers the invitation link once; the link opens the invitation page', async () => {
    const res = await invite(adminA.token, { email: 'new-staff@practice.test', role: 'practice_staff' });
    expect(res.statusCode).toBe(201);
    const d = res.json().data;
    expect(d).toMatchObject({ email: 'new-staff@practice.test', role: 'practice_staff' });
    expect(d.invitation_url).toMatch(new RegExp(`^${e.t.config.publicBaseUrl}/practice/invitations/[A-Za-z0-9_-]{40,}$`));
    expect(new Date(d.expires_at).getTime() - Date.now()).toBeGreaterThan(6.9 * 24 * 3600 * 1000);
    const stored = await e.t.db.selectFrom('practice_invitations').selectAll().where('email', '=', 'new-staff@practice.test').executeTakeFirstOrThrow();
    expect(stored.practice_id).toBe(PRACTICE_A);
    expect(stored.created_by_user_id).toBe(adminA.userId);
    expect(d.invitation_url).not.toContain(stored.token_hash);
    const page = await e.t.app.inject({ url: new URL(d.invitation_url).pathname });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Test practice');
  });

  it('refuses a bad e-mail, a taken e-mail, a bad role (400 naming the field)', async () => {
    const bad = await invite(adminA.token, { email: 'not-an-address', role: 'practice_staff' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toContainEqual({ field: 'email', message: 'must be a valid e-mail address' });
    const taken = await invite(adminA.token, { email: adminB.email, role: 'practice_staff' });
    expect(taken.statusCode).toBe(400);
    expect(taken.json().errors[0].field).toBe('email');
    const role = await invite(adminA.token, { email: 'x@practice.test', role: 'owner' });
    expect(role.statusCode).toBe(400);
    expect(role.json().errors.map((x: { field: string }) => x.field)).toContain('role');
  });

  it('a staff member may not invite (403)', async () => {
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    expect((await invite(staff.token, { email: 'y@practice.test', role: 'practice_staff' })).statusCode).toBe(403);
  });
});

describe('DELETE /practice/v1/staff/{user_id}', () => {
  it('removes a member: their token stops working at once', async () => {
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    expect((await e.t.app.inject({ url: '/practice/v1/me', headers: bearer(staff.token) })).statusCode).toBe(200);
    const res = await remove(adminA.token, staff.userId);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { user_id: staff.userId } });
    expect((await e.t.app.inject({ url: '/practice/v1/me', headers: bearer(staff.token) })).statusCode).toBe(401);
    expect((await list(adminA.token)).json().data.map((m: { user_id: string }) => m.user_id)).not.toContain(staff.userId);
    expect((await remove(adminA.token, staff.userId)).statusCode).toBe(404);
  });

  it('isolation: an admin of practice A cannot remove (or see) staff of practice B: 404, and B\'s member keeps working', async () => {
    const staffB = await practiceMember(e.t, { practiceId: PRACTICE_B, role: 'practice_staff' });
    const res = await remove(adminA.token, staffB.userId);
    expect(res.statusCode).toBe(404);
    expect((await remove(adminA.token, adminB.userId)).statusCode).toBe(404);
    expect((await e.t.app.inject({ url: '/practice/v1/me', headers: bearer(staffB.token) })).statusCode).toBe(200);
    expect((await list(adminB.token)).json().data.map((m: { user_id: string }) => m.user_id)).toContain(staffB.userId);
    expect((await remove(adminA.token, 'us_nobody')).statusCode).toBe(404);
  });

  it('the last admin cannot be removed (409); with a second admin, one can go', async () => {
    const res = await remove(adminB.token, adminB.userId);
    expect(res.statusCode).toBe(409);
    expect(res.json().errors[0]).toEqual({ field: 'user_id', message: 'the last admin of a practice cannot be removed' });
    const second = await practiceMember(e.t, { practiceId: PRACTICE_B, role: 'practice_admin' });
    expect((await remove(second.token, adminB.userId)).statusCode).toBe(200);
    expect((await remove(second.token, second.userId)).statusCode).toBe(409);
    adminB = second;
  });

  it('a staff member may not remove (403)', async () => {
    const staff = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    expect((await remove(staff.token, adminA.userId)).statusCode).toBe(403);
  });
});
