/** docs/api/auth.md#who-sees-which-appointments over the appointment endpoints: user bookings belong to that user alone. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anonymousToken, bearer, userToken } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { createBody, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from './fixtures.js';

describe(`appointment visibility by credential (${engineName})`, () => {
  let e: SchedulingEnv;
  let alice: string;
  let bob: string;
  let aliceAppt: string;
  let machineAppt: string;
  beforeAll(async () => {
    e = await schedulingEnv();
    alice = await userToken(e.t, e.dev, { email: 'alice@example.org', password: 'correct horse battery staple' });
    bob = await userToken(e.t, e.dev, { email: 'bob@example.org', password: 'correct horse battery staple' });
    const day = await slots(e, PL.ny, { start: nyDate(4), end: nyDate(4) });
    const post = (token: string, start: string) =>
      e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(token), payload: createBody(PL.ny, start) });
    const a = await post(alice, day[0]!.start_time);
    expect(a.statusCode, a.body).toBe(200);
    aliceAppt = a.json().data.appointment_id;
    machineAppt = (await post(e.token, day[1]!.start_time)).json().data.appointment_id;
  });
  afterAll(async () => e.close());

  const read = (token: string, id: string) => e.t.app.inject({ url: `/v1/appointments/${id}`, headers: bearer(token) });
  const list = async (token: string) =>
    ((await e.t.app.inject({ url: '/v1/appointments', headers: bearer(token) })).json().data as { appointment_id: string }[]).map((d) => d.appointment_id);

  it('the booking user sees and lists only their own appointment', async () => {
    expect((await read(alice, aliceAppt)).statusCode).toBe(200);
    expect((await read(alice, machineAppt)).statusCode).toBe(404);
    expect(await list(alice)).toEqual([aliceAppt]);
  });

  it('another user of the same developer sees nothing and cannot modify it', async () => {
    expect((await read(bob, aliceAppt)).statusCode).toBe(404);
    expect(await list(bob)).toEqual([]);
    const cancel = await e.t.app.inject({ method: 'POST', url: '/v1/appointments/cancel', headers: bearer(bob), payload: { appointment_id: aliceAppt } });
    expect(cancel.statusCode).toBe(404);
    const part = await e.t.app.inject({ url: `/v1/appointments/${aliceAppt}/participants`, headers: bearer(bob) });
    expect(part.statusCode).toBe(404);
  });

  it('the developer\'s machine credential sees machine bookings, not the user\'s', async () => {
    expect((await read(e.token, aliceAppt)).statusCode).toBe(404);
    expect((await read(e.token, machineAppt)).statusCode).toBe(200);
    expect(await list(e.token)).toEqual([machineAppt]);
    const reschedule = await e.t.app.inject({ method: 'POST', url: '/v1/appointments/reschedule', headers: bearer(e.token), payload: { appointment_id: aliceAppt, start_time: '2030-01-01T10:00:00Z' } });
    expect(reschedule.statusCode).toBe(404);
  });

  it('the user can modify their own appointment', async () => {
    const res = await e.t.app.inject({ method: 'POST', url: '/v1/appointments/cancel', headers: bearer(alice), payload: { appointment_id: aliceAppt } });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('anonymous tokens are refused on appointment operations (403)', async () => {
    const anon = await anonymousToken(e.t, e.dev);
    expect((await e.t.app.inject({ url: '/v1/appointments', headers: bearer(anon) })).statusCode).toBe(403);
    const create = await e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(anon), payload: createBody(PL.ny, '2030-01-01T10:00:00Z') });
    expect(create.statusCode).toBe(403);
  });
});
