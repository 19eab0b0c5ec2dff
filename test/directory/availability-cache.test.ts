/** The listings' memo of availability summaries (src/domain/availability/summary-cache.ts). */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AvailabilityCache, MAX_SUMMARY_TTL_MS } from '../../src/domain/availability/summary-cache.js';
import { directoryAvailability } from '../../src/domain/availability/directory-availability.js';
import type { AvailabilitySummary } from '../../src/domain/availability/summaries.js';
import { searchProvidersByNpi } from '../../src/domain/directory/provider-search.js';
import { listSchedulableEntities } from '../../src/domain/directory/schedulable-entities.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { loadFixture, NPI, PL, type DirectoryFixture } from './fixture.js';

let t: TestApp;
let f: DirectoryFixture;
beforeAll(async () => {
  t = await testApp();
  f = await loadFixture(t);
});
afterAll(async () => t?.close());

const summary = (n: number): AvailabilitySummary => ({ new: { next_28_days: 'none' }, existing: { next_28_days: n > 0 ? 'limited' : 'none' } });

describe('AvailabilityCache', () => {
  test('an entry lives for its TTL (at most 60 s), per environment and id', () => {
    const c = new AvailabilityCache({ ttlMs: 10 * 60_000 });
    c.set('sandbox', 'a', summary(1), 1000);
    expect(c.get('sandbox', 'a', 1000 + MAX_SUMMARY_TTL_MS - 1)).toEqual(summary(1));
    expect(c.get('production', 'a', 1001)).toBeUndefined();
    expect(c.get('sandbox', 'a', 1000 + MAX_SUMMARY_TTL_MS)).toBeUndefined();
    expect(c.size).toBe(0);
    expect([c.hits, c.misses]).toEqual([1, 2]);
  });

  test('holds at most maxEntries, dropping the oldest', () => {
    const c = new AvailabilityCache({ maxEntries: 2 });
    c.set('sandbox', 'a', summary(0), 0);
    c.set('sandbox', 'b', summary(0), 0);
    c.set('sandbox', 'a', summary(1), 1);
    c.set('sandbox', 'c', summary(0), 2);
    expect(c.size).toBe(2);
    expect(c.get('sandbox', 'b', 3)).toBeUndefined();
    expect(c.get('sandbox', 'a', 3)).toEqual(summary(1));
    expect(c.get('sandbox', 'c', 3)).toBeDefined();
  });
});

describe('directoryAvailability with a cache', () => {
  const env = () => t.config.appEnv;
  const ids = [PL.a1nyc, PL.a1bk, PL.a2phl, PL.b1nyc, PL.virt];

  test('gives the summaries computed without it; reuses them within the TTL, recomputes after', async () => {
    const now = new Date('2026-03-02T12:00:00Z');
    const cache = new AvailabilityCache();
    const fresh = await directoryAvailability(t.db, { env: env(), providerLocationIds: ids, now });
    const first = await directoryAvailability(t.db, { env: env(), providerLocationIds: ids, now, cache });
    expect(first).toEqual(fresh);
    expect(cache.size).toBe(ids.length);
    expect(first.get(PL.a2phl)!.existing).toEqual({ next_28_days: 'none' });

    // A pushed calendar timeslot gives pr_a2 at lo_phl availability for existing patients.
    await t.db.insertInto('calendar_timeslots').values({
      id: 'ts_cache', env: env(), provider_id: 'pr_a2', location_id: 'lo_phl', local_date: '2026-03-03', start_local: '2026-03-03 08:00:00',
      time_zone: 'America/New_York', start_utc: '2026-03-03T13:00:00Z', allowed_visit_reason_ids: null, excluded_visit_reason_ids: null,
      patient_type: 'existing',
    }).execute();
    const later = new Date(now.getTime() + 30_000);
    const hits = cache.hits;
    const stale = await directoryAvailability(t.db, { env: env(), providerLocationIds: ids, now: later, cache });
    expect(cache.hits - hits).toBe(ids.length);
    expect(stale.get(PL.a2phl)!.existing).toEqual({ next_28_days: 'none' });
    const uncached = await directoryAvailability(t.db, { env: env(), providerLocationIds: [PL.a2phl], now: later });
    expect(uncached.get(PL.a2phl)!.existing).toEqual({ next_available_utc: '2026-03-03T13:00:00.000Z', next_28_days: 'limited' });

    const expired = await directoryAvailability(t.db, { env: env(), providerLocationIds: ids, now: new Date(now.getTime() + MAX_SUMMARY_TTL_MS), cache });
    expect(expired.get(PL.a2phl)!.existing).toEqual({ next_available_utc: '2026-03-03T13:00:00.000Z', next_28_days: 'limited' });
    await t.db.deleteFrom('calendar_timeslots').where('id', '=', 'ts_cache').execute();
  });

  test('schedulable entities are the same with and without the cache, cold and warm', async () => {
    const caller = { env: env(), developerId: f.devA.developer_id };
    const q = { page: 0, pageSize: 100, recentOnly: false, publicBaseUrl: t.config.publicBaseUrl, now: new Date('2026-03-02T12:00:00Z') };
    const plain = await listSchedulableEntities(t.db, caller, q);
    const cache = new AvailabilityCache();
    const cold = await listSchedulableEntities(t.db, caller, { ...q, cache });
    const warm = await listSchedulableEntities(t.db, caller, { ...q, cache });
    expect(cold).toEqual(plain);
    expect(warm).toEqual(plain);
    expect(cache.hits).toBe(plain.entities.length);
    expect(plain.entities.find((e) => e.id === PL.a1nyc)!.new_patient_availability.next_available_utc).toBe('2026-03-02T14:00:00.000Z');
  });

  test('providers by NPI show the memoised first availability date (a listing, like the search)', async () => {
    const caller = { env: env(), developerId: f.devA.developer_id };
    const q = { npis: [NPI.a1], publicBaseUrl: t.config.publicBaseUrl, now: new Date('2026-03-02T12:00:00Z') };
    const dates = (r: Awaited<ReturnType<typeof searchProvidersByNpi>>) =>
      r[0]!.providers.flatMap((p) => [...p.locations, ...p.virtual_locations]).map((l) => [l.provider_location_id, l.first_availability_date_in_provider_local_time]);
    const plain = await searchProvidersByNpi(t.db, caller, q);
    expect(dates(plain)).toContainEqual([PL.a1nyc, '2026-03-02']);
    const cache = new AvailabilityCache();
    // A summary remembered a moment ago wins over the schedule within its TTL.
    cache.set(env(), PL.a1nyc, { ...summary(0), first_availability_date_in_provider_local_time: '2026-04-01' }, q.now.getTime());
    const cached = await searchProvidersByNpi(t.db, caller, { ...q, cache });
    expect(dates(cached)).toContainEqual([PL.a1nyc, '2026-04-01']);
    expect(dates(cached).filter(([id]) => id !== PL.a1nyc)).toEqual(dates(plain).filter(([id]) => id !== PL.a1nyc));
  });
});
