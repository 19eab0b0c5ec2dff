/**
 * One answer names every bad field (docs/api/errors.md, "Validation") beyond booking: calendar push,
 * provider and facility search, availability, the sandbox mock webhook, and the admin API. Each case
 * mixes a schema error with a format or reference error (or two of the later kinds), and expects
 * every field in one 400; nothing is written by a refused request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { nyDate, PL, schedulingEnv, type SchedulingEnv } from '../appointments/fixtures.js';

type Res = { statusCode: number; body: string; json(): { errors: { field?: string; message: string }[] } };
const fields = (res: Res) => res.json().errors.map((e) => e.field).sort();
const admin = { authorization: 'Bearer test-admin-token-0123456789abcdefgh' };

describe(`validation names every bad field in one answer: search, calendar, webhooks, admin (${engineName})`, () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv();
  });
  afterAll(async () => e.close());
  const get = (url: string) => e.t.app.inject({ url, headers: bearer(e.token) });
  const expect400 = (res: Res, expected: string[]) => {
    expect(res.statusCode, res.body).toBe(400);
    expect(fields(res)).toEqual([...expected].sort());
  };

  it('calendar push: a schema error, a bad date and bad slots together; nothing replaced', async () => {
    const date = nyDate(3);
    const res = await e.t.app.inject({
      method: 'PUT',
      url: `/v1/providers/pr_ny/calendar/timeslots?date=${date.slice(0, 8)}99`,
      headers: bearer(e.token),
      payload: {
        timeslots: [
          { provider_id: 'pr_ny', location_id: 'lo_ny', start_time: `${date}T09:00`, time_zone: 'Mars/Olympus' },
          { provider_id: 'pr_other', location_id: 'lo_ny', start_time: '9am', time_zone: 'America/New_York', patient_type: 'old' },
        ],
      },
    });
    expect400(res, ['date', 'timeslots[0].time_zone', 'timeslots[1].patient_type', 'timeslots[1].provider_id', 'timeslots[1].start_time']);
    const valid = await e.t.app.inject({
      method: 'PUT',
      url: `/v1/providers/pr_ny/calendar/timeslots?date=${date}`,
      headers: bearer(e.token),
      payload: { timeslots: [{ provider_id: 'pr_ny', location_id: 'lo_ny', start_time: `${date}T9:00`, time_zone: 'Mars/Olympus' }] },
    });
    expect400(valid, ['timeslots[0].start_time', 'timeslots[0].time_zone']);
    expect((await e.t.db.selectFrom('calendar_timeslots').select('id').execute()).length).toBe(0);
  });

  it('provider-location search: schema, format and reference errors together', async () => {
    expect400(await get('/v1/provider_locations?zip_code=00000&visit_reason_id=vr_nope&insurance_plan_id=ip_nope&page_size=1000'), [
      'insurance_plan_id', 'page_size', 'visit_reason_id', 'zip_code',
    ]);
    expect400(await get('/v1/provider_locations?zip_code=10001&specialty_id=sp_nope&visit_reason_id=pc_t30&insurance_plan_id=ip_nope'), [
      'insurance_plan_id', 'specialty_id', 'visit_reason_id',
    ]);
    expect400(await get('/v1/provider_locations?zip_code=1000x'), ['specialty_id', 'zip_code']);
  });

  it('NPI search, facilities and one provider-location: every error at once', async () => {
    expect400(await get('/v1/providers?npis=123,4567890123&insurance_plan_id=ip_nope'), ['insurance_plan_id', 'npis']);
    expect400(await get('/v1-beta/facilities?visit_reason_id=vr_nope&insurance_plan_id=ip_nope&building_type=barn'), [
      'building_type', 'insurance_plan_id', 'visit_reason_id', 'zip_code',
    ]);
    expect400(await get('/v1/provider_locations/not-an-id?insurance_plan_id=ip_nope'), ['insurance_plan_id', 'provider_location_id']);
  });

  it('availability: schema, date form, window and an unknown visit reason together', async () => {
    expect400(await get(`/v1/provider_locations/availability?provider_location_ids=${encodeURIComponent(PL.ny)}&visit_reason_id=vr_nope&patient_type=old&start_date_in_provider_local_time=2030-02-30`), [
      'patient_type', 'start_date_in_provider_local_time', 'visit_reason_id',
    ]);
    expect400(await get(`/v1/provider_locations/availability?provider_location_ids=${encodeURIComponent(PL.ny)}&visit_reason_id=vr_nope&patient_type=new&start_date_in_provider_local_time=2030-01-01&end_date_in_provider_local_time=2030-03-01`), [
      'end_date_in_provider_local_time', 'visit_reason_id',
    ]);
  });

  it('mock webhook: a schema error with a bad URL and a bad key', async () => {
    const res = await e.t.app.inject({
      method: 'POST',
      url: '/v1/webhook/mock-request',
      headers: bearer(e.token),
      payload: { webhook_url: 'http://169.254.169.254/latest', webhook_key: '***', appointment_update_type: 'exploded' },
    });
    expect400(res, ['appointment_update_type', 'webhook_key', 'webhook_url']);
  });

  it('admin: new user, new developer, webhook receiver and operator move name every bad field', async () => {
    const post = (url: string, payload: unknown, method: 'POST' | 'PUT' = 'POST') => e.t.app.inject({ method, url: `/admin/v1${url}`, headers: admin, payload: payload as object });
    expect400(await post('/users', { email: 'nope', password: 'short', role: 'provider', provider_id: 'pr_missing', extra: 'x'.repeat(3) }), ['email', 'password', 'provider_id']);
    expect400(await post('/users', { email: 'x@example.org', password: 'p'.repeat(2000), role: 'provider' }), ['password', 'provider_id']);
    expect400(await post('/users', { email: 'x@example.org', password: 'long enough', role: 'patient', provider_id: 'pr_ny' }), ['provider_id']);
    expect((await e.t.db.selectFrom('users').select('id').where('email', '=', 'x@example.org').execute()).length).toBe(0);
    expect400(await post('/developers', { name: '', redirect_uris: ['not a url', 'https://ok.example/cb', 'ftp://x.example/'] }), ['name', 'redirect_uris[0]', 'redirect_uris[2]']);
    expect400(await post(`/developers/${e.dev.developer_id}/webhook`, { url: 'http://[fd00:ec2::254]/', key: '!!', extra: 1 }, 'PUT'), ['key', 'url']);
    expect400(await post(`/developers/${e.dev.developer_id}/webhook`, { url: 'gopher://x', key: 5 }, 'PUT'), ['key', 'url']);
    expect400(await post('/appointments/ap_x/transition', { to: 'confirmed', cancellation_reason_type: 'provider_not_available' }), ['cancellation_reason_type']);
    // An unknown reason type is also one given without to=cancelled: both are said.
    expect400(await post('/appointments/ap_x/transition', { to: 'exploded', cancellation_reason_type: 'nope' }), ['cancellation_reason_type', 'cancellation_reason_type', 'to']);
  });
});
