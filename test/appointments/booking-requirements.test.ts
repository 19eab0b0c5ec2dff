/**
 * `booking_requirements.accepts_booking_requests_from` is enforced (docs/scheduling.md, "Who a
 * location takes bookings from"): a booking is in-network (a plan the location takes), out-of-network
 * (another plan) or self-pay (no insurance, or `is_self_pay: true`), and a location that does not take
 * that kind refuses it naming `data.patient.insurance`. An insurance object must say a plan or
 * self-pay, not both and not neither. A kept booking context follows plan-mapping changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { createBody, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from './fixtures.js';

describe(`who a location takes bookings from (${engineName})`, () => {
  let e: SchedulingEnv;
  let free: { start_time: string }[];
  let next = 0;
  beforeAll(async () => {
    e = await schedulingEnv();
    // pr_ny|lo_ny takes plan ip_t; from now on it takes in-network bookings only.
    await e.t.db.updateTable('provider_locations').set({ accepts_booking_requests_from: ['in_network'] }).where('id', '=', PL.ny).execute();
    free = await slots(e, PL.ny, { start: nyDate(5), end: nyDate(6) });
  });
  afterAll(async () => e.close());

  const book = (insurance: Record<string, unknown> | undefined) =>
    e.t.app.inject({
      method: 'POST',
      url: '/v1/appointments',
      headers: bearer(e.token),
      payload: createBody(PL.ny, free[next++]!.start_time, {}, insurance === undefined ? {} : { insurance }),
    });
  const refusedFor = async (insurance: Record<string, unknown> | undefined, message: RegExp) => {
    const res = await book(insurance);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().errors).toEqual([{ field: 'data.patient.insurance', message: expect.stringMatching(message) }]);
  };

  it('refuses self-pay and out-of-network bookings at an in-network-only location, and takes an in-network one', async () => {
    await refusedFor(undefined, /in_network only; this one is self_pay/);
    await refusedFor({ is_self_pay: true }, /this one is self_pay/);
    await refusedFor({ insurance_plan_id: 'ip_u', insurance_member_id: 'M1' }, /this one is out_of_network/);
    const ok = await book({ insurance_plan_id: 'ip_t', insurance_member_id: 'M1' });
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('refuses an insurance object that names neither a plan nor self-pay, or both', async () => {
    await refusedFor({}, /must name insurance_plan_id, or set is_self_pay/);
    await refusedFor({ insurance_member_id: 'M1' }, /must name insurance_plan_id, or set is_self_pay/);
    await refusedFor({ insurance_plan_id: 'ip_t', is_self_pay: true }, /one or the other/);
  });

  it('a location that takes everyone takes every kind', async () => {
    const other = await slots(e, PL.ny2, { start: nyDate(5), end: nyDate(5) });
    for (const [i, insurance] of [undefined, { is_self_pay: true }, { insurance_plan_id: 'ip_u' }].entries()) {
      const res = await e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(e.token), payload: createBody(PL.ny2, other[i]!.start_time, {}, insurance ? { insurance } : {}) });
      expect(res.statusCode, res.body).toBe(200);
    }
  });

  it('follows a plan-mapping change even when the booking context is kept in memory', async () => {
    expect((await book({ insurance_plan_id: 'ip_t' })).statusCode).toBe(200); // the context for ip_t is now kept
    await e.t.db.deleteFrom('provider_location_insurance_plans').where('provider_location_id', '=', PL.ny).where('insurance_plan_id', '=', 'ip_t').execute();
    await refusedFor({ insurance_plan_id: 'ip_t' }, /this one is out_of_network/);
    await e.t.db.insertInto('provider_location_insurance_plans').values({ env: 'sandbox', provider_location_id: PL.ny, insurance_plan_id: 'ip_u' }).execute();
    expect((await book({ insurance_plan_id: 'ip_u' })).statusCode).toBe(200);
  });
});
