/** GET /v1/schedulable_entities (docs/api/directory.md#schedulable-entities) and the availability summaries behind it. */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Ajv } from 'ajv';
import { Type } from 'typebox';
import { directoryAvailability } from '../../src/domain/availability/directory-availability.js';
import { recentChangeSummary } from '../../src/domain/directory/recent-change-summary.js';
import { listSchedulableEntities } from '../../src/domain/directory/schedulable-entities.js';
import { joinDeveloperDirectory } from '../../src/domain/directory/write/developer-directory.js';
import { pageEnvelope } from '../../src/routes/v1/common-schemas.js';
import { RecentChangeSummary, SchedulableEntity } from '../../src/routes/v1/directory/schemas.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { clientToken } from '../helpers/auth.js';
import { expect400, fixtureDocument, get, loadFixture, NPI, pathOf, PL, type DirectoryFixture } from './fixture.js';

let t: TestApp;
let f: DirectoryFixture;
beforeAll(async () => {
  t = await testApp();
  f = await loadFixture(t);
});
afterAll(async () => t?.close());

const URL_ = '/v1/schedulable_entities';

describe('GET /v1/schedulable_entities', () => {
  test('lists the active provider-locations of the caller directory, without request_id', async () => {
    const r = await get(t, URL_, f.tokenA);
    expect(r.status).toBe(200);
    expect(r.body).not.toHaveProperty('request_id');
    expect(r.body).toMatchObject({ page: 0, page_size: 5000, total_count: 5, next_url: null });
    const ids = r.body.data.schedulable_entities.map((e: { id: string }) => e.id);
    expect(ids).toEqual([PL.a1bk, PL.a1nyc, PL.a2phl, PL.b1nyc, PL.virt]);
    expect(ids).not.toContain(PL.out);
    expect(ids).not.toContain(PL.other);
    expect(ids).not.toContain(PL.gone);
    const e = r.body.data.schedulable_entities.find((x: { id: string }) => x.id === PL.a1nyc);
    expect(e).toMatchObject({
      id: PL.a1nyc,
      npi: NPI.a1,
      type: 'provider_location',
      time_zone: 'America/New_York',
      main_specialty_id: 'sp_fam',
      main_specialty_name: 'Family Medicine',
      new_patient_availability: { next_28_days: 'available' },
      existing_patient_availability: { next_28_days: 'available' },
    });
    expect(e.go_live_timestamp_utc).toMatch(/Z$/);
    expect(e.profile_last_modified_timestamp_utc).toMatch(/Z$/);
    expect(e.new_patient_availability.next_available_utc).toMatch(/Z$/);
    const u = new URL(e.new_patient_availability.url);
    expect(u.pathname).toBe('/v1/provider_locations/availability');
    expect(Object.fromEntries(u.searchParams)).toEqual({ provider_location_ids: PL.a1nyc, visit_reason_id: 'pc_fam_1', patient_type: 'new' });
    expect(new URL(e.existing_patient_availability.url).searchParams.get('patient_type')).toBe('existing');
    const byId = Object.fromEntries(r.body.data.schedulable_entities.map((x: { id: string }) => [x.id, x]));
    expect(byId[PL.a1bk].new_patient_availability.next_28_days).toBe('limited');
    expect(byId[PL.a2phl].new_patient_availability).toEqual({ next_28_days: 'none', url: expect.any(String) });
  });

  test('recent_change_summary lists what was added; the other developer sees only theirs', async () => {
    const r = await get(t, URL_, f.tokenA);
    expect(r.body.data.recent_change_summary).toEqual({
      schedulable_entities_added: [PL.a1bk, PL.a1nyc, PL.a2phl, PL.b1nyc, PL.virt],
      schedulable_entities_removed: [],
      schedulable_entities_profile_updated: [],
    });
    const b = await get(t, URL_, f.tokenB);
    expect(b.body.total_count).toBe(1);
    expect(b.body.data.schedulable_entities.map((e: { id: string }) => e.id)).toEqual([PL.other]);
    expect(b.body.data.recent_change_summary.schedulable_entities_added).toEqual([PL.other]);
  });

  test('pages with a working next_url', async () => {
    const p0 = await get(t, `${URL_}?page_size=2`, f.tokenA);
    expect(p0.body).toMatchObject({ page: 0, page_size: 2, total_count: 5 });
    const p1 = await get(t, pathOf(p0.body.next_url), f.tokenA);
    const p2 = await get(t, pathOf(p1.body.next_url), f.tokenA);
    expect(p2.body).toMatchObject({ page: 2, next_url: null });
    const all = [p0, p1, p2].flatMap((p) => p.body.data.schedulable_entities.map((e: { id: string }) => e.id));
    expect(new Set(all).size).toBe(5);
  });

  test('a page read in parts (parallel statements) is the page read in one statement', async () => {
    const caller = { env: t.config.appEnv, developerId: f.devA.developer_id };
    const now = new Date();
    const read = (page: number, pageSize: number, maxPart?: number) =>
      listSchedulableEntities(t.db, caller, { page, pageSize, recentOnly: false, publicBaseUrl: 'http://x', now, ...(maxPart ? { maxPart } : {}) });
    let compared = 0;
    for (let pageSize = 1; pageSize <= 6; pageSize++) {
      for (let page = 0; page * pageSize <= 6; page++) {
        const whole = await read(page, pageSize);
        for (const maxPart of [1, 2, 3]) {
          const parted = await read(page, pageSize, maxPart);
          expect(parted, `page ${page}, size ${pageSize}, parts of ${maxPart}`).toEqual(whole);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(40);
    // Parts really split the page: three parts of at most 2 for a page of 5, every entity once, in order.
    const five = await read(0, 5, 2);
    expect(five.entities.map((e) => e.id)).toEqual([PL.a1bk, PL.a1nyc, PL.a2phl, PL.b1nyc, PL.virt]);
    expect(five.total).toBe(5);
    expect((await read(0, 3, 2)).entities.map((e) => e.id)).toEqual([PL.a1bk, PL.a1nyc, PL.a2phl]);
    expect((await read(1, 3, 2)).entities.map((e) => e.id)).toEqual([PL.b1nyc, PL.virt]);
    expect(await read(9, 3, 2)).toEqual({ total: 5, entities: [] });
  });

  test('an entity leaving the directory while a page is read in parts is not listed twice', async () => {
    const caller = { env: t.config.appEnv, developerId: f.devA.developer_id };
    const leave = (active: boolean) =>
      t.db.updateTable('developer_provider_locations').set({ active }).where('developer_id', '=', f.devA.developer_id).where('provider_location_id', '=', PL.a1nyc).execute();
    // Runs the deactivation right after the statement that finds where each part starts, before the parts are read.
    let left = false;
    const pending = new Set<unknown>();
    const watched = t.db.withPlugin({
      transformQuery: (a) => {
        if (!left && JSON.stringify(a.node).includes('row_number() OVER')) pending.add(a.queryId);
        return a.node;
      },
      transformResult: async (a) => {
        if (pending.delete(a.queryId)) {
          left = true;
          await leave(false);
        }
        return a.result;
      },
    });
    try {
      // Parts of 2 start at a1bk, a2phl and virt; a1nyc (in the first part) leaves in between.
      const r = await listSchedulableEntities(watched, caller, { page: 0, pageSize: 5, recentOnly: false, publicBaseUrl: 'http://x', maxPart: 2 });
      expect(left).toBe(true);
      expect(r.entities.map((e) => e.id)).toEqual([PL.a1bk, PL.a2phl, PL.b1nyc, PL.virt]);
    } finally {
      await leave(true);
    }
  });

  test('the 200 body holds the response schema\'s fields and nothing else (it is written with JSON.stringify)', async () => {
    const strict = (schema: unknown): unknown => {
      if (Array.isArray(schema)) return schema.map(strict);
      if (!schema || typeof schema !== 'object') return schema;
      const out: Record<string, unknown> = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, strict(v)]));
      if (out.type === 'object') out.additionalProperties = false;
      return out;
    };
    const schema = pageEnvelope(Type.Object({ recent_change_summary: RecentChangeSummary, schedulable_entities: Type.Array(SchedulableEntity) }), { withRequestId: false });
    const validate = new Ajv({ allErrors: true, strict: false }).compile(strict(schema) as object);
    const r = await get(t, `${URL_}?page_size=3`, f.tokenA);
    expect(r.status).toBe(200);
    expect(validate(r.body), JSON.stringify(validate.errors)).toBe(true);
    expect(r.body.data.schedulable_entities).toHaveLength(3);
    // The check itself rejects a field the schema lacks.
    expect(validate({ ...r.body, extra: 1 })).toBe(false);
  });

  test('limits: page_size 1..10000, page >= 0, schedule_types, recent_changes_72hrs boolean', async () => {
    expect((await get(t, `${URL_}?page_size=10000`, f.tokenA)).status).toBe(200);
    expect400(await get(t, `${URL_}?page_size=10001`, f.tokenA), 'page_size');
    expect400(await get(t, `${URL_}?page_size=0`, f.tokenA), 'page_size');
    expect400(await get(t, `${URL_}?page=-1`, f.tokenA), 'page');
    expect400(await get(t, `${URL_}?schedule_types=provider_location,hospital`, f.tokenA), 'schedule_types');
    expect400(await get(t, `${URL_}?recent_changes_72hrs=perhaps`, f.tokenA), 'recent_changes_72hrs');
    const typed = await get(t, `${URL_}?schedule_types=provider_location`, f.tokenA);
    expect(typed.body.total_count).toBe(5);
  });

  test('needs external.schedulable_entity.read', async () => {
    expect((await get(t, URL_)).status).toBe(401);
    const narrow = await clientToken(t, f.devA, 'external.appointment.read');
    const r = await get(t, URL_, narrow);
    expect(r.status).toBe(403);
    const scoped = await clientToken(t, f.devA, 'external.schedulable_entity.read');
    expect((await get(t, URL_, scoped)).status).toBe(200);
  });

  test('changes: deactivation is "removed", a profile change is "profile_updated"; recent_changes_72hrs filters', async () => {
    const doc = fixtureDocument();
    await t.db.transaction().execute((trx) =>
      writeDirectory(trx, t.config.appEnv, {
        providers: doc.providers!.filter((p) => p.id === 'pr_a2').map((p) => ({ ...p, last_name: 'Renamed' })),
        provider_locations: doc.provider_locations!.filter((p) => p.provider_id === 'pr_virt').map((p) => ({ ...p, active: false })),
      }),
    );
    // Everything is older than 72 hours except the changes above.
    await t.db.updateTable('developer_provider_locations').set({ added_at: new Date(Date.now() - 100 * 3600e3) }).execute();
    await t.db.updateTable('directory_changes').set({ changed_at: new Date(Date.now() - 100 * 3600e3) }).where('change', '=', 'added').execute();
    await t.db.updateTable('provider_locations').set({ go_live_at: new Date(Date.now() - 100 * 3600e3) }).execute();
    await t.db.updateTable('provider_locations').set({ profile_updated_at: new Date(Date.now() - 100 * 3600e3) }).where('id', '!=', PL.a2phl).execute();
    const r = await get(t, URL_, f.tokenA);
    expect(r.body.data.recent_change_summary).toEqual({
      schedulable_entities_added: [],
      schedulable_entities_removed: [PL.virt],
      schedulable_entities_profile_updated: [PL.a2phl],
    });
    expect(r.body.total_count).toBe(4);
    const recent = await get(t, `${URL_}?recent_changes_72hrs=true`, f.tokenA);
    expect(recent.body.data.schedulable_entities.map((e: { id: string }) => e.id)).toEqual([PL.a2phl]);
    expect(recent.body.total_count).toBe(1);
  });

  test('recent_change_summary: a change is the directory\'s if its provider-location was in it then or joined it since; by key or hashed, the same', async () => {
    const env = t.config.appEnv;
    const past = new Date(Date.now() - 100 * 3600e3);
    await t.db.updateTable('developer_provider_locations').set({ added_at: past }).execute();
    await t.db.updateTable('directory_changes').set({ changed_at: past }).execute();
    const doc = fixtureDocument();
    // In A's directory before: its profile change and its deactivation are A's.
    await t.db.transaction().execute((trx) =>
      writeDirectory(trx, env, {
        providers: doc.providers!.filter((p) => p.id === 'pr_b1').map((p) => ({ ...p, last_name: 'Changed' })),
        provider_locations: doc.provider_locations!.filter((p) => p.provider_id === 'pr_a1' && p.location_id === 'lo_bk').map((p) => ({ ...p, active: false })),
      }),
    );
    // B adds both after their changes: added (the active one) and removed (the inactive one), as before.
    await t.db.transaction().execute((trx) => joinDeveloperDirectory(trx, env, f.devB.developer_id, [PL.b1nyc, PL.a1bk]));
    const a = { env, developerId: f.devA.developer_id };
    const b = { env, developerId: f.devB.developer_id };
    const expectedA = { schedulable_entities_added: [], schedulable_entities_removed: [PL.a1bk], schedulable_entities_profile_updated: [PL.b1nyc] };
    const expectedB = { schedulable_entities_added: [PL.b1nyc], schedulable_entities_removed: [PL.a1bk], schedulable_entities_profile_updated: [] };
    for (const byKeyMax of [undefined, 0]) {
      expect(await recentChangeSummary(t.db, a, new Date(), byKeyMax), `byKeyMax ${byKeyMax}`).toEqual(expectedA);
      expect(await recentChangeSummary(t.db, b, new Date(), byKeyMax), `byKeyMax ${byKeyMax}`).toEqual(expectedB);
    }
    expect((await get(t, URL_, f.tokenA)).body.data.recent_change_summary).toEqual(expectedA);
    // As the tests below expect the fixture.
    await t.db.transaction().execute((trx) =>
      writeDirectory(trx, env, { provider_locations: doc.provider_locations!.filter((p) => p.provider_id === 'pr_a1' && p.location_id === 'lo_bk') }),
    );
    await t.db.deleteFrom('developer_provider_locations').where('developer_id', '=', f.devB.developer_id).where('provider_location_id', 'in', [PL.b1nyc, PL.a1bk]).execute();
  });
});

describe('directoryAvailability', () => {
  const env = () => t.config.appEnv;

  test('weekly blocks split by duration; limited below 20 slots in 28 days; holds are not offered', async () => {
    // Monday 2026-03-02 12:00 UTC; pr_a1 at lo_bk works Wednesdays 09:00–10:00 New York time.
    const now = new Date('2026-03-02T12:00:00Z');
    const m = await directoryAvailability(t.db, { env: env(), providerLocationIds: [PL.a1bk, PL.a2phl, PL.out], now });
    expect(m.get(PL.a1bk)).toMatchObject({
      new: { next_available_utc: '2026-03-04T14:00:00.000Z', next_28_days: 'limited' },
      existing: { next_available_utc: '2026-03-04T14:00:00.000Z', next_28_days: 'limited' },
      first_availability_date_in_provider_local_time: '2026-03-04',
    });
    expect(m.get(PL.a2phl)).toMatchObject({ new: { next_28_days: 'none' }, existing: { next_28_days: 'none' } });
    expect(m.get(PL.a2phl)!.new.next_available_utc).toBeUndefined();

    // A hold on pr_a1 from 14:00 to 14:30 UTC that Wednesday: 30-minute slots start at 14:30.
    await t.db.insertInto('patients').values({
      id: 'pa_1', env: env(), developer_id: f.devA.developer_id, created_by_user_id: null, developer_patient_id: null,
      first_name: 'P', last_name: 'Q', date_of_birth: '1990-01-01', sex_at_birth: 'female', phone_number: '2125550100',
      email_address: 'p@example.org', address: JSON.stringify({}), insurance: null, gender: null,
    }).execute();
    await t.db.insertInto('appointments').values({
      id: 'ap_1', env: env(), developer_id: f.devA.developer_id, booked_by_client_id: f.devA.client_id, booked_by_user_id: null,
      patient_id: 'pa_1', developer_patient_id: null, provider_location_id: PL.a1nyc, provider_id: 'pr_a1', location_id: 'lo_nyc',
      practice_id: 'pt_a', visit_reason_id: 'pc_fam_1', patient_type: 'new', start_time: '2026-03-04T14:00:00Z',
      end_time: '2026-03-04T14:30:00Z', time_zone: 'America/New_York', pending_start_time: null, pending_end_time: null,
      appointment_status: 'confirmed', confirmation_type: 'auto', visit_type: 'in_person', notes: null, cancellation_reason: null,
      cancellation_reason_type: null, arrived_at: null, evaluate_after: null,
    }).execute();
    await t.db.insertInto('appointment_holds').values({
      appointment_id: 'ap_1', kind: 'current', env: env(), provider_id: 'pr_a1', during: '[2026-03-04T14:00:00Z,2026-03-04T14:30:00Z)',
    }).execute();
    const held = await directoryAvailability(t.db, { env: env(), providerLocationIds: [PL.a1bk], now });
    expect(held.get(PL.a1bk)!.new.next_available_utc).toBe('2026-03-04T14:30:00.000Z');
  });

  test('local times are converted in the location zone across a daylight-saving change', async () => {
    // Sunday 2026-03-08 is the spring-forward day in New York; 09:00 on Monday is 13:00 UTC (EDT).
    const m = await directoryAvailability(t.db, { env: env(), providerLocationIds: [PL.b1nyc], now: new Date('2026-03-08T22:00:00Z') });
    expect(m.get(PL.b1nyc)!.new).toEqual({ next_available_utc: '2026-03-09T13:00:00.000Z', next_28_days: 'available' });
    // And on Saturday before the change, 09:00 is 14:00 UTC (EST).
    const before = await directoryAvailability(t.db, { env: env(), providerLocationIds: [PL.b1nyc], now: new Date('2026-03-07T01:00:00Z') });
    expect(before.get(PL.b1nyc)!.new.next_available_utc).toBe('2026-03-07T14:00:00.000Z');
  });

  test('calendar timeslots pushed for a provider-location count as availability', async () => {
    await t.db.insertInto('calendar_timeslots').values({
      id: 'ts_1', env: env(), provider_id: 'pr_a2', location_id: 'lo_phl', local_date: '2026-03-03', start_local: '2026-03-03 08:00:00',
      time_zone: 'America/New_York', start_utc: '2026-03-03T13:00:00Z', allowed_visit_reason_ids: null, excluded_visit_reason_ids: null,
      patient_type: 'existing',
    }).execute();
    const m = await directoryAvailability(t.db, { env: env(), providerLocationIds: [PL.a2phl], now: new Date('2026-03-02T12:00:00Z') });
    expect(m.get(PL.a2phl)!.existing).toEqual({ next_available_utc: '2026-03-03T13:00:00.000Z', next_28_days: 'limited' });
    expect(m.get(PL.a2phl)!.new).toEqual({ next_28_days: 'none' });
  });
});
