/**
 * Sandbox writes are isolated per developer (docs/decisions/0007-sandbox-writes-isolated.md): a
 * calendar push or an insurance-mapping change to a provider-location that another developer's
 * sandbox directory also holds is refused (403), so one developer cannot erase or change what
 * another pushed; writes to a developer's own provider-locations work as before, and production
 * (one shared truth per practice) is not restricted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { nyDate, PL, schedulingDirectory, schedulingEnv, type SchedulingEnv } from '../appointments/fixtures.js';

const date = nyDate(6);
const body = (provider: string, location: string, zone: string) => ({
  timeslots: [{ provider_id: provider, location_id: location, start_time: `${date}T09:00`, time_zone: zone }],
});
const put = (t: TestApp, token: string, provider: string, payload: object) =>
  t.app.inject({ method: 'PUT', url: `/v1/providers/${provider}/calendar/timeslots?date=${date}`, headers: bearer(token), payload });
const mapping = (t: TestApp, token: string, pl: string) =>
  t.app.inject({ method: 'POST', url: `/v1/provider_locations/${encodeURIComponent(pl)}/insurance_mappings`, headers: bearer(token), payload: { operation: 'Add', insurance_plan_ids: ['ip_u'] } });

describe(`sandbox writes isolated per developer (${engineName})`, () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv(); // pr_ny|lo_ny is in both developers' directories; pr_phx only in the first's
  });
  afterAll(async () => e.close());

  it("refuses calendar pushes to a shared sandbox provider from either developer, and keeps what was there", async () => {
    const slotsBefore = await e.t.db.selectFrom('calendar_timeslots').select('id').where('provider_id', '=', 'pr_ny').execute();
    for (const token of [e.token, e.otherToken]) {
      for (const payload of [body('pr_ny', 'lo_ny', 'America/New_York'), { timeslots: [] }]) {
        const res = await put(e.t, token, 'pr_ny', payload);
        expect(res.statusCode, res.body).toBe(403);
        expect(res.json()).toMatchObject({ error_type: 'invalid_request', errors: [{ field: 'provider_id', message: expect.stringContaining('shared with other developers') }] });
      }
    }
    expect(await e.t.db.selectFrom('calendar_timeslots').select('id').where('provider_id', '=', 'pr_ny').execute()).toEqual(slotsBefore);
  });

  it("accepts calendar pushes to a provider only the developer's directory holds", async () => {
    const res = await put(e.t, e.token, 'pr_phx', body('pr_phx', 'lo_phx', 'America/Phoenix'));
    expect(res.statusCode, res.body).toBe(200);
  });

  it('refuses insurance-mapping changes to a shared sandbox provider-location, and accepts them for an own one', async () => {
    for (const token of [e.token, e.otherToken]) {
      const res = await mapping(e.t, token, PL.ny);
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().errors[0].field).toBe('provider_location_id');
    }
    expect(await e.t.db.selectFrom('insurance_mapping_requests').select('id').where('provider_location_id', '=', PL.ny).execute()).toEqual([]);
    expect((await mapping(e.t, e.token, PL.phx)).statusCode).toBe(202);
  });
});

describe(`production is one shared truth (${engineName})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.org' });
  });
  afterAll(async () => t.close());

  it('lets developers sharing a provider push its calendar and request mapping changes', async () => {
    const a = await newDeveloper(t, 'A', ['https://a.example.org/cb']);
    const b = await newDeveloper(t, 'B', ['https://b.example.org/cb']);
    await t.db.transaction().execute((trx) => writeDirectory(trx, 'production', schedulingDirectory(), { developerId: a.developer_id }));
    await t.db.insertInto('developer_provider_locations').values({ env: 'production', developer_id: b.developer_id, provider_location_id: PL.ny }).execute();
    for (const dev of [a, b]) {
      const token = await clientToken(t, dev);
      const res = await put(t, token, 'pr_ny', body('pr_ny', 'lo_ny', 'America/New_York'));
      expect(res.statusCode, res.body).toBe(200);
      expect((await mapping(t, token, PL.ny)).statusCode).toBe(202);
    }
  });
});
