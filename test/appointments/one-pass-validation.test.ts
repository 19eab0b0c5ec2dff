/**
 * One answer names every bad field (docs/api/errors.md, "Validation"): schema errors (lengths,
 * enums), rules a schema cannot say (phone digits, ZIP, combinations) and references (unknown plan,
 * visit reason, a time not offered) come back together, for booking, reschedule and cancel. Nothing
 * is written by a refused request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { book, createBody, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from './fixtures.js';

const fields = (res: { json(): { errors: { field?: string }[] } }) => res.json().errors.map((e) => e.field).sort();

describe(`validation names every bad field in one answer: appointments (${engineName})`, () => {
  let e: SchedulingEnv;
  let free: { start_time: string }[];
  beforeAll(async () => {
    e = await schedulingEnv();
    free = await slots(e, PL.ny, { start: nyDate(4), end: nyDate(5) });
  });
  afterAll(async () => e.close());

  const post = (url: string, payload: unknown) => e.t.app.inject({ method: 'POST', url, headers: bearer(e.token), payload: payload as object });
  const count = async () => Number((await e.t.db.selectFrom('appointments').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  it('booking: a schema error (notes too long) and a format error (phone) together', async () => {
    const before = await count();
    const res = await post('/v1/appointments', createBody(PL.ny, free[0]!.start_time, { notes: 'x'.repeat(101) }, { phone_number: '0125550123' }));
    expect(res.statusCode, res.body).toBe(400);
    expect(fields(res)).toEqual(['data.notes', 'data.patient.phone_number']);
    expect(res.json().errors.find((x: { field: string }) => x.field === 'data.patient.phone_number').message).toMatch(/first and fourth not 0 or 1/);
    expect(await count()).toBe(before);
  });

  it('booking: schema, format and reference errors together (unknown visit reason and plan, bad ZIP, bad gender, too-long name)', async () => {
    const res = await post(
      '/v1/appointments',
      createBody(PL.ny, free[0]!.start_time, { visit_reason_id: 'vr_nope' }, {
        first_name: 'A'.repeat(51),
        gender: ['none_apply', 'intersex'],
        patient_address: { address1: '1 Main St', city: 'New York', state: 'NY', zip_code: '1000' },
        insurance: { insurance_plan_id: 'ip_nope', insurance_member_id: 'M1' },
      }),
    );
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().errors).toContainEqual({ field: 'data.patient.first_name', message: 'must be at most 50 characters' });
    expect(fields(res)).toEqual([
      'data.patient.first_name',
      'data.patient.gender',
      'data.patient.insurance.insurance_plan_id',
      'data.patient.patient_address.zip_code',
      'data.visit_reason_id',
    ]);
  });

  it('booking with a valid schema: format and reference errors together (e-mail, unknown provider-location)', async () => {
    const res = await post('/v1/appointments', createBody('pr_nope|lo_nope', free[0]!.start_time, {}, { email_address: 'not-an-address', date_of_birth: '2999-01-01' }));
    expect(res.statusCode, res.body).toBe(400);
    expect(fields(res)).toEqual(['data.patient.date_of_birth', 'data.patient.email_address', 'data.provider_location_id']);
  });

  it('booking: a time not offered is reported with a format error and an unknown plan', async () => {
    const notOffered = new Date(Date.parse(free[0]!.start_time) + 7 * 60_000).toISOString();
    const res = await post('/v1/appointments', createBody(PL.ny, notOffered, {}, { zip_code: 'x', state: 'ZZ', insurance: { insurance_plan_id: 'ip_nope' } }));
    expect(res.statusCode, res.body).toBe(400);
    expect(fields(res)).toEqual(['data.patient.insurance.insurance_plan_id', 'data.start_time']);
    const withSchema = await post('/v1/appointments', { ...createBody(PL.ny, notOffered), appointment_type: 'nope' });
    expect(withSchema.statusCode).toBe(400);
    expect(fields(withSchema)).toEqual(['appointment_type', 'data.start_time']);
  });

  it('booking: input of the wrong types still gets every schema error and no 500', async () => {
    const res = await post('/v1/appointments', { appointment_type: 'providers', data: { start_time: 5, visit_reason_id: [], provider_location_id: {}, patient: 'x', patient_type: 'old' } });
    expect(res.statusCode, res.body).toBe(400);
    expect(fields(res)).toEqual(expect.arrayContaining(['data.patient', 'data.patient_type', 'data.start_time']));
  });

  it('reschedule: a schema error and a malformed time together; a time not offered named', async () => {
    const booked = await book(e, PL.ny, free[1]!.start_time);
    expect(booked.statusCode, booked.body).toBe(200);
    const id = booked.json().data.appointment_id;
    const notOffered = new Date(Date.parse(free[2]!.start_time) + 7 * 60_000).toISOString();
    const res = await post('/v1/appointments/reschedule', { appointment_id: id, start_time: notOffered });
    expect(res.statusCode, res.body).toBe(400);
    expect(fields(res)).toEqual(['start_time']);
    const malformed = await post('/v1/appointments/reschedule', { appointment_id: '', start_time: 'tomorrow' });
    expect(fields(malformed)).toEqual(['appointment_id', 'start_time']);
    const row = await e.t.db.selectFrom('appointments').select('appointment_status').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.appointment_status).not.toBe('pending_reschedule');
  });

  it('cancel: an unknown reason type and free text it does not allow, together', async () => {
    const res = await post('/v1/appointments/cancel', { appointment_id: 'x', cancellation_reason_type: 'nope', cancellation_reason: 'because' });
    expect(res.statusCode, res.body).toBe(400);
    expect(fields(res)).toEqual(['cancellation_reason', 'cancellation_reason_type']);
  });
});
