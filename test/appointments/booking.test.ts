/** Appointment create, read, list, participants (docs/api/appointments.md; docs/api/auth.md#scopes). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, clientToken } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { book, createBody, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from './fixtures.js';

describe(`booking appointments (${engineName})`, () => {
  let e: SchedulingEnv;
  let day: { start_time: string }[];
  beforeAll(async () => {
    e = await schedulingEnv();
    day = await slots(e, PL.ny, { start: nyDate(3), end: nyDate(3) });
  });
  afterAll(async () => e.close());

  const post = (payload: unknown, token = e.token) =>
    e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(token), payload: payload as object });

  it('books an offered slot: 200, pending_booking, create fields only, time no longer offered', async () => {
    const res = await book(e, PL.ny, day[0]!.start_time, { notes: 'Knee pain' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.request_id).toBe(res.headers['x-request-id']);
    expect(body.data).toEqual({
      appointment_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      appointment_status: 'pending_booking',
      developer_patient_id: 'dp-1',
      is_provider_resource: false,
      location_phone_number: '2125550100',
      confirmation_type: 'pending_evaluation',
      visit_type: 'in_person',
      notes: 'Knee pain',
    });
    const after = await slots(e, PL.ny, { start: nyDate(3), end: nyDate(3) });
    expect(after.map((s) => s.start_time)).not.toContain(day[0]!.start_time);
    // The same provider at another location is busy too (time is held per provider).
    const elsewhere = await slots(e, PL.nyElsewhere, { start: nyDate(3), end: nyDate(3) });
    expect(elsewhere.map((s) => s.start_time)).not.toContain(day[0]!.start_time);
  });

  it('reads the appointment back with the full record, start_time in the provider offset', async () => {
    const created = (await book(e, PL.ny, day[1]!.start_time)).json().data;
    const res = await e.t.app.inject({ url: `/v1/appointments/${created.appointment_id}`, headers: bearer(e.token) });
    expect(res.statusCode).toBe(200);
    const d = res.json().data;
    expect(d.start_time).toBe(day[1]!.start_time);
    expect(d.start_time).toMatch(/-0[45]:00$/);
    expect(d).toMatchObject({ provider_location_id: PL.ny, visit_reason_id: 'pc_t30', patient_type: 'new', practice_id: 'pt_t' });
    expect(d.created_time_utc).toMatch(/Z$/);
    await new Promise((r) => setTimeout(r, 150)); // read audit records are written in batches
    const audit = await e.t.db.selectFrom('audit_log').select('action').where('appointment_id', '=', created.appointment_id).execute();
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['create', 'read']));
  });

  it('a booked slot cannot be booked again: 409 naming the field', async () => {
    const again = await book(e, PL.ny, day[0]!.start_time);
    expect(again.statusCode).toBe(409);
    expect(again.json().errors[0].field).toBe('data.start_time');
    // An overlapping start with a longer visit reason is refused as well.
    const sixty = await slots(e, PL.ny2, { start: nyDate(3), end: nyDate(3), visitReasonId: 'pc_t60' });
    expect(sixty.length).toBeGreaterThan(0);
  });

  it('the same instant written in another offset is the same start time', async () => {
    const local = day[5]!.start_time;
    const utc = new Date(local).toISOString().replace('.000Z', 'Z');
    const res = await book(e, PL.ny, utc);
    expect(res.statusCode, res.body).toBe(200);
  });

  it('platform video visits carry a waiting room path', async () => {
    const hnl = await slots(e, PL.hnl, { start: nyDate(4), end: nyDate(4) });
    const res = await book(e, PL.hnl, hnl[0]!.start_time);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.visit_type).toBe('platform_video_service');
    expect(res.json().data.waiting_room_path).toContain(res.json().data.appointment_id);
  });

  it('manual provider-locations book as manual', async () => {
    const s = await slots(e, PL.manual, { start: nyDate(3), end: nyDate(3) });
    const res = await book(e, PL.manual, s[0]!.start_time);
    expect(res.json().data.confirmation_type).toBe('manual');
  });

  describe('every patient-field rule answers 400 naming the field', () => {
    const cases: [string, (s: string) => unknown, string][] = [
      ['appointment_type', (s) => ({ ...createBody(PL.ny, s), appointment_type: 'other' }), 'appointment_type'],
      ['missing data', () => ({ appointment_type: 'providers' }), 'data'],
      ['start_time without offset', () => createBody(PL.ny, '2030-01-01T10:00:00'), 'data.start_time'],
      ['start_time not offered', () => createBody(PL.ny, `${nyDate(3)}T07:00:00-05:00`), 'data.start_time'],
      ['start_time in the past', () => createBody(PL.ny, '2020-01-06T09:00:00-05:00'), 'data.start_time'],
      ['visit reason not accepted', (s) => createBody(PL.ny, s, { visit_reason_id: 'pc_other' }), 'data.visit_reason_id'],
      ['unknown visit reason', (s) => createBody(PL.ny, s, { visit_reason_id: 'pc_nope' }), 'data.visit_reason_id'],
      ['unknown provider location', (s) => createBody('pr_x|lo_x', s), 'data.provider_location_id'],
      ['patient_type', (s) => createBody(PL.ny, s, { patient_type: 'returning' }), 'data.patient_type'],
      ['notes > 100', (s) => createBody(PL.ny, s, { notes: 'x'.repeat(101) }), 'data.notes'],
      ['first_name > 50', (s) => createBody(PL.ny, s, {}, { first_name: 'x'.repeat(51) }), 'data.patient.first_name'],
      ['last_name missing', (s) => createBody(PL.ny, s, {}, { last_name: undefined }), 'data.patient.last_name'],
      ['date_of_birth not a date', (s) => createBody(PL.ny, s, {}, { date_of_birth: '1990-02-30' }), 'data.patient.date_of_birth'],
      ['sex_at_birth', (s) => createBody(PL.ny, s, {}, { sex_at_birth: 'x' }), 'data.patient.sex_at_birth'],
      ['phone formatted', (s) => createBody(PL.ny, s, {}, { phone_number: '212-555-01' }), 'data.patient.phone_number'],
      ['phone first digit 1', (s) => createBody(PL.ny, s, {}, { phone_number: '1125550123' }), 'data.patient.phone_number'],
      ['phone fourth digit 0', (s) => createBody(PL.ny, s, {}, { phone_number: '2120550123' }), 'data.patient.phone_number'],
      ['phone 11 chars', (s) => createBody(PL.ny, s, {}, { phone_number: '21255501234' }), 'data.patient.phone_number'],
      ['email', (s) => createBody(PL.ny, s, {}, { email_address: 'not-an-email' }), 'data.patient.email_address'],
      ['email > 255', (s) => createBody(PL.ny, s, {}, { email_address: `${'a'.repeat(250)}@x.org` }), 'data.patient.email_address'],
      ['zip', (s) => createBody(PL.ny, s, {}, { patient_address: { address1: 'a', city: 'b', state: 'NY', zip_code: '1234' } }), 'data.patient.patient_address.zip_code'],
      ['state 3 letters', (s) => createBody(PL.ny, s, {}, { patient_address: { address1: 'a', city: 'b', state: 'NYC', zip_code: '12345' } }), 'data.patient.patient_address.state'],
      ['state unknown', (s) => createBody(PL.ny, s, {}, { patient_address: { address1: 'a', city: 'b', state: 'ZZ', zip_code: '12345' } }), 'data.patient.patient_address.state'],
      ['address2 > 20', (s) => createBody(PL.ny, s, {}, { patient_address: { address1: 'a', address2: 'x'.repeat(21), city: 'b', state: 'NY', zip_code: '12345' } }), 'data.patient.patient_address.address2'],
      ['gender unknown value', (s) => createBody(PL.ny, s, {}, { gender: ['robot'] }), 'data.patient.gender[0]'],
      ['prefer_not_to_say combined', (s) => createBody(PL.ny, s, {}, { gender: ['prefer_not_to_say', 'cisgender'] }), 'data.patient.gender'],
      ['none_apply combined', (s) => createBody(PL.ny, s, {}, { gender: ['intersex', 'none_apply'] }), 'data.patient.gender'],
      ['unknown insurance plan', (s) => createBody(PL.ny, s, {}, { insurance: { insurance_plan_id: 'ip_nope' } }), 'data.patient.insurance.insurance_plan_id'],
      ['wrong type', (s) => createBody(PL.ny, s, { notes: 5 }), 'data.notes'],
    ];
    for (const [name, body, field] of cases) {
      it(name, async () => {
        const res = await post(body(day[10]!.start_time));
        expect(res.statusCode, res.body).toBe(400);
        const errs = res.json().errors as { field?: string }[];
        expect(errs.map((x) => x.field)).toContain(field);
        expect(res.json().error_type).toBe('invalid_request');
      });
    }
    it('accepts combinable gender values and prefer_not_to_say alone', async () => {
      const a = await post(createBody(PL.ny, day[11]!.start_time, {}, { gender: ['transgender_woman', 'genderqueer'] }));
      expect(a.statusCode, a.body).toBe(200);
      const b = await post(createBody(PL.ny, day[12]!.start_time, {}, { gender: ['prefer_not_to_say'], developer_patient_id: undefined }));
      expect(b.statusCode, b.body).toBe(200);
      expect(b.json().data.developer_patient_id).toBeUndefined();
    });
  });

  describe('security', () => {
    it('401 without a token, 403 without the write scope', async () => {
      const none = await e.t.app.inject({ method: 'POST', url: '/v1/appointments', payload: createBody(PL.ny, day[13]!.start_time) });
      expect(none.statusCode).toBe(401);
      const readOnly = await clientToken(e.t, e.dev, 'external.appointment.read');
      expect((await post(createBody(PL.ny, day[13]!.start_time), readOnly)).statusCode).toBe(403);
      const writeOnly = await clientToken(e.t, e.dev, 'external.appointment.write');
      const list = await e.t.app.inject({ url: '/v1/appointments', headers: bearer(writeOnly) });
      expect(list.statusCode).toBe(403);
    });

    it('another developer cannot book outside its directory, nor see this developer\'s appointments', async () => {
      const outside = await post(createBody(PL.phx, `${nyDate(3)}T09:00:00-07:00`), e.otherToken);
      expect(outside.statusCode).toBe(400);
      expect(outside.json().errors[0].field).toBe('data.provider_location_id');
      const mine = (await book(e, PL.ny, day[14]!.start_time)).json().data.appointment_id;
      for (const url of [`/v1/appointments/${mine}`, `/v1/appointments/${mine}/participants`]) {
        expect((await e.t.app.inject({ url, headers: bearer(e.otherToken) })).statusCode).toBe(404);
      }
      const confirm = await e.t.app.inject({ method: 'POST', url: '/v1/appointments/confirm', headers: bearer(e.otherToken), payload: { appointment_id: mine } });
      expect(confirm.statusCode).toBe(404);
      const list = await e.t.app.inject({ url: '/v1/appointments', headers: bearer(e.otherToken) });
      expect(list.json().total_count).toBe(0);
    });

    it('unknown appointment: 404 with the error body', async () => {
      const res = await e.t.app.inject({ url: '/v1/appointments/00000000-0000-0000-0000-000000000000', headers: bearer(e.token) });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error_type: 'invalid_request', errors: [{ field: 'appointment_id' }] });
    });
  });

  it('participants: the patient, provider and location ids, audited, never in logs', async () => {
    const id = (await book(e, PL.ny, day[15]!.start_time)).json().data.appointment_id;
    const res = await e.t.app.inject({ url: `/v1/appointments/${id}/participants`, headers: bearer(e.token) });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      provider_id: 'pr_ny',
      location_id: 'lo_ny',
      patient: {
        patient_id: expect.stringMatching(/^pa_/),
        developer_patient_id: 'dp-1',
        first_name: 'Ada',
        last_name: 'Lovelace',
        date_of_birth: '1990-05-17',
        sex_at_birth: 'female',
        phone_number: '2125550123',
        email_address: 'ada@example.org',
        uploaded_attachments: [],
        is_booked_by_another_patient: false,
      },
    });
  });
});
