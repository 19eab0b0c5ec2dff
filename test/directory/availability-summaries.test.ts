/**
 * Stored availability summaries (migration 0009; src/domain/availability/summary-store.ts,
 * summary-refresh.ts): the refresher writes what `directoryAvailability` computes,
 * listings serve a row only while it is younger than the listings' staleness (60 s), rows follow
 * deactivation and deletion, concurrent passes never write a row twice, a batch's write leaves
 * out what changed since its read (a schedule change held open during a pass included), and the refresh job
 * (src/jobs/availability-summary-refresh.ts) runs and stops.
 */
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AvailabilityCache, MAX_SUMMARY_TTL_MS } from '../../src/domain/availability/summary-cache.js';
import { directoryAvailability } from '../../src/domain/availability/directory-availability.js';
import type { AvailabilitySummary } from '../../src/domain/availability/summaries.js';
import { releaseLease, takeLease } from '../../src/db/leases.js';
import {
  refreshAvailabilitySummaries,
  refreshLeaseName,
  REFRESH_OLDER_THAN_MS,
  type MissingWalkMemo,
} from '../../src/domain/availability/summary-refresh.js';
import { readStoredSummaries, writeSummaries } from '../../src/domain/availability/summary-store.js';
import { lockProviderSchedule } from '../../src/domain/practices/schedule/scope.js';
import { addTimeOff } from '../../src/domain/practices/schedule/time-off.js';
import { loadProviderLocationViews } from '../../src/domain/directory/provider-location-view.js';
import { LocalClock } from '../../src/domain/scheduling/local-time.js';
import { listSchedulableEntities } from '../../src/domain/directory/schedulable-entities.js';
import type { DirectoryCaller } from '../../src/domain/directory/visible.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { availabilitySummaryRefreshJob } from '../../src/jobs/availability-summary-refresh.js';
import { startLoop } from '../../src/jobs/loop.js';
import { startJobs } from '../../src/jobs/registry.js';
import { freshDatabase, testDatabaseUrl } from '../helpers/db.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { get, loadFixture, PL, type DirectoryFixture } from './fixture.js';

let t: TestApp;
let f: DirectoryFixture;
let devA: DirectoryCaller;
beforeAll(async () => {
  t = await testApp();
  f = await loadFixture(t);
  devA = { env: t.config.appEnv, developerId: f.devA.developer_id } as DirectoryCaller;
});
afterAll(async () => t?.close());

const T = new Date('2026-03-02T12:00:00Z');
const at = (ms: number) => new Date(T.getTime() + ms);
const env = () => t.config.appEnv;
const page = (now: Date, cache?: AvailabilityCache) =>
  listSchedulableEntities(t.db, devA, { page: 0, pageSize: 100, recentOnly: false, publicBaseUrl: t.config.publicBaseUrl, now, ...(cache ? { cache } : {}) });
const entity = async (now: Date, id: string, cache?: AvailabilityCache) => (await page(now, cache)).entities.find((e) => e.id === id)!;

async function activeIds(): Promise<string[]> {
  const rows = await t.db.selectFrom('provider_locations').select('id').where('env', '=', env()).where('active', '=', true).orderBy('id').execute();
  return rows.map((r) => r.id);
}

async function storedIds(): Promise<string[]> {
  const rows = await t.db.selectFrom('availability_summaries').select('provider_location_id').where('env', '=', env()).orderBy('provider_location_id').execute();
  return rows.map((r) => r.provider_location_id);
}

/** Every stored summary, whatever its age. */
async function allStored(): Promise<Map<string, AvailabilitySummary>> {
  const m = await readStoredSummaries(t.db, env(), await storedIds(), { nowMs: Date.UTC(2100, 0, 1), maxAgeMs: Date.UTC(2100, 0, 1), activeOnly: false });
  return new Map([...m].map(([id, s]) => [id, s.summary]));
}

/** Makes the stored row of `id` say "none" for new patients (it says otherwise) and sets its `computed_at`. */
async function tamper(id: string, computedAt: Date): Promise<void> {
  const r = await t.db
    .updateTable('availability_summaries')
    .set({ new_next_available_utc: null, new_next_28_days: 'none', first_availability_date: '2099-01-01', computed_at: computedAt })
    .where('env', '=', env())
    .where('provider_location_id', '=', id)
    .executeTakeFirst();
  expect(Number(r.numUpdatedRows)).toBe(1);
}

/** Deletes the stored rows and refreshes everything for `now`. */
async function refreshAllAt(now: Date): Promise<number> {
  await t.db.deleteFrom('availability_summaries').execute();
  return refreshAvailabilitySummaries(t.db, { env: env(), now });
}

/** Deletes provider-location `id` with every row that refers to it (its summary row goes by cascade). */
async function removeProviderLocation(id: string): Promise<void> {
  const refs = await sql<{ t: string }>`
    SELECT conrelid::regclass::text AS t FROM pg_constraint
    WHERE contype = 'f' AND confrelid = 'provider_locations'::regclass AND conrelid <> 'availability_summaries'::regclass`.execute(t.db);
  await t.db.transaction().execute(async (trx) => {
    for (const r of refs.rows) await sql`DELETE FROM ${sql.table(r.t)} WHERE env = ${env()} AND provider_location_id = ${id}`.execute(trx);
    await trx.deleteFrom('provider_locations').where('env', '=', env()).where('id', '=', id).execute();
  });
}

async function waitFor(cond: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('refreshAvailabilitySummaries', () => {
  test('writes one row per active provider-location, equal to the computed summaries; a second pass has nothing to do', async () => {
    const active = await activeIds();
    expect(active).toEqual(expect.arrayContaining([PL.a1nyc, PL.a1bk, PL.a2phl, PL.out]));
    expect(await refreshAllAt(T)).toBe(active.length);
    expect(await storedIds()).toEqual(active);
    expect(await storedIds()).not.toContain(PL.gone);
    const computed = await directoryAvailability(t.db, { env: env(), providerLocationIds: active, now: T });
    expect(await allStored()).toEqual(computed);
    // The fixture gives each kind of answer (so the columns are all exercised).
    expect(computed.get(PL.a1nyc)!.new.next_28_days).toBe('available');
    expect(computed.get(PL.a1bk)!.new.next_28_days).toBe('limited');
    expect(computed.get(PL.a2phl)!.new).toEqual({ next_28_days: 'none' });
    const raw = await t.db.selectFrom('availability_summaries').selectAll().where('provider_location_id', '=', PL.a1nyc).executeTakeFirstOrThrow();
    expect(new Date(raw.computed_at).getTime()).toBe(T.getTime());

    expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: at(REFRESH_OLDER_THAN_MS - 1) })).toBe(0);
    expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: at(REFRESH_OLDER_THAN_MS + 1) })).toBe(active.length);
    const rows = await t.db.selectFrom('availability_summaries').select('computed_at').where('env', '=', env()).execute();
    expect(rows.map((r) => new Date(r.computed_at).getTime())).toEqual(active.map(() => at(REFRESH_OLDER_THAN_MS + 1).getTime()));
  });

  test('takes missing rows first, then the oldest, batch by batch', async () => {
    await refreshAllAt(T);
    const active = await activeIds();
    // Rows of different ages, one missing.
    await t.db.deleteFrom('availability_summaries').where('provider_location_id', '=', PL.b1nyc).execute();
    await t.db.updateTable('availability_summaries').set({ computed_at: at(-20_000) }).where('provider_location_id', '=', PL.virt).execute();
    await t.db.updateTable('availability_summaries').set({ computed_at: at(-10_000) }).where('provider_location_id', '=', PL.a1bk).execute();
    // A clock one millisecond later at each reading: each batch of one is stamped with its turn.
    let tick = 0;
    const clock = () => at(REFRESH_OLDER_THAN_MS + 1 + tick++);
    expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: clock, batchSize: 1 })).toBe(active.length);
    const rows = await t.db.selectFrom('availability_summaries').select(['provider_location_id', 'computed_at']).execute();
    const order = rows.sort((a, b) => new Date(a.computed_at).getTime() - new Date(b.computed_at).getTime()).map((r) => r.provider_location_id);
    const rest = active.filter((id) => ![PL.b1nyc, PL.virt, PL.a1bk].includes(id));
    expect(order).toEqual([PL.b1nyc, PL.virt, PL.a1bk, ...rest]);
  });

  test('an aborted pass ends after the batch in progress', async () => {
    await t.db.deleteFrom('availability_summaries').execute();
    const abort = new AbortController();
    let readings = 0;
    // Read once for the pass, then once per batch: aborted during the first batch.
    const clock = () => {
      if (++readings === 2) abort.abort();
      return T;
    };
    expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: clock, batchSize: 1, signal: abort.signal })).toBe(1);
    expect((await storedIds()).length).toBe(1);
  });

  test('rows follow deactivation (deleted once old, never served meanwhile) and deletion (cascade); a reactivated one comes back', async () => {
    const tmp = { provider_id: 'pr_a1', location_id: 'lo_phl', weekly_schedule: [{ weekday: 2, start: '09:00', end: '12:00' }] };
    const write = (d: Parameters<typeof writeDirectory>[2]) => t.db.transaction().execute((trx) => writeDirectory(trx, env(), d));
    await write({ provider_locations: [tmp] });
    const id = 'pr_a1|lo_phl';
    await t.db.insertInto('developer_provider_locations').values({ env: env(), developer_id: devA.developerId, provider_location_id: id }).execute();
    await refreshAllAt(T);
    expect(await storedIds()).toContain(id);

    await write({ provider_locations: [{ ...tmp, active: false }] });
    const cache = new AvailabilityCache();
    const views = await loadProviderLocationViews(t.db, devA, { ids: [id], publicBaseUrl: 'http://x', now: at(1000), cache });
    expect(views.has(id)).toBe(false);
    const byIds = await directoryAvailability(t.db, { env: env(), providerLocationIds: [id, PL.a1nyc], now: at(1000), cache });
    expect([...byIds.keys()]).toEqual([PL.a1nyc]);
    // Still young: kept (nothing serves it); past the refresh age: deleted, not recomputed.
    expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: at(1000) })).toBe(0);
    expect(await storedIds()).toContain(id);
    const active = await activeIds();
    // (One provider-location a slice: the walk leaves the deactivated row alone; the listing of old rows deletes it.)
    expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: at(REFRESH_OLDER_THAN_MS + 1), sliceSize: 1 })).toBe(active.length);
    expect(await storedIds()).toEqual(active);
    expect(await storedIds()).not.toContain(id);

    // Reactivated: missing, so written by the next pass.
    await write({ provider_locations: [tmp] });
    expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: at(REFRESH_OLDER_THAN_MS + 2) })).toBe(1);
    expect(await storedIds()).toContain(id);

    // Deleted with everything that refers to it: its row goes too.
    await removeProviderLocation(id);
    expect(await storedIds()).not.toContain(id);
    expect(await storedIds()).toEqual(await activeIds());
  });

  test('two concurrent passes write every row once and do not fail', async () => {
    const active = await activeIds();
    for (let round = 0; round < 3; round++) {
      await t.db.deleteFrom('availability_summaries').execute();
      const counts = await Promise.all([
        refreshAvailabilitySummaries(t.db, { env: env(), now: T, batchSize: 1 }),
        refreshAvailabilitySummaries(t.db, { env: env(), now: T, batchSize: 1 }),
      ]);
      expect(counts[0]! + counts[1]!).toBe(active.length);
      expect(await storedIds()).toEqual(active);
    }
  });

  test('a pass walks the provider-locations a slice at a time and the old rows a batch at a time, each once', async () => {
    const active = await activeIds();
    await t.db.deleteFrom('availability_summaries').execute();
    expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: T, batchSize: 1, sliceSize: 2 })).toBe(active.length);
    expect(await storedIds()).toEqual(active);
    // Every second row old: those alone are refreshed, each once, whatever the batches.
    const old = active.filter((_, i) => i % 2 === 0);
    await t.db.updateTable('availability_summaries').set({ computed_at: at(-REFRESH_OLDER_THAN_MS - 1) }).where('env', '=', env()).where('provider_location_id', 'in', old).execute();
    expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: T, batchSize: 2, sliceSize: 3 })).toBe(old.length);
    const rows = await t.db.selectFrom('availability_summaries').select('computed_at').where('env', '=', env()).execute();
    expect(rows.map((r) => new Date(r.computed_at).getTime())).toEqual(active.map(() => T.getTime()));
  });

  test('with the walk memo the job keeps, a pass walks for missing rows only after the directory changed since a walk that found none', async () => {
    const active = await activeIds();
    await t.db.deleteFrom('availability_summaries').execute();
    const walks: MissingWalkMemo = { directoryVersion: null };
    const pass = (now: Date) => refreshAvailabilitySummaries(t.db, { env: env(), now, walks });
    const dropByHand = (id: string) => t.db.deleteFrom('availability_summaries').where('env', '=', env()).where('provider_location_id', '=', id).execute();
    expect(await pass(T)).toBe(active.length);
    // That walk found rows missing: the next one walks again, finds none, and remembers the version.
    expect(walks.directoryVersion).toBeNull();
    expect(await pass(T)).toBe(0);
    expect(walks.directoryVersion).not.toBeNull();
    // A row deleted by hand (nothing the service does) is not looked for while the directory stays as it was…
    await dropByHand(PL.b1nyc);
    expect(await pass(T)).toBe(0);
    expect(await storedIds()).not.toContain(PL.b1nyc);
    // …and a directory change (a provider-location added) brings a walk: the new one and that row are written.
    const tmp = { provider_id: 'pr_a1', location_id: 'lo_phl', weekly_schedule: [{ weekday: 2, start: '09:00', end: '12:00' }] };
    const id = 'pr_a1|lo_phl';
    const write = (d: Parameters<typeof writeDirectory>[2]) => t.db.transaction().execute((trx) => writeDirectory(trx, env(), d));
    try {
      await write({ provider_locations: [tmp] });
      expect(await pass(at(1))).toBe(2);
      expect(await storedIds()).toEqual(await activeIds());
      // Deactivated: the walk its change brings keeps the young row; once the row is old, the listing
      // of old rows deletes it with no walk (a row deleted by hand meanwhile stays missing: none ran).
      await write({ provider_locations: [{ ...tmp, active: false }] });
      expect(await pass(at(2))).toBe(0);
      expect(await storedIds()).toContain(id);
      await dropByHand(PL.b1nyc);
      expect(await pass(at(REFRESH_OLDER_THAN_MS + 3))).toBe(active.length - 1);
      expect(await storedIds()).toEqual(active.filter((a) => a !== PL.b1nyc));
    } finally {
      await removeProviderLocation(id);
    }
    await refreshAllAt(T);
  });

  test("a practice's schedule change marks its provider-locations' rows old: never served, and the next pass rewrites them first, with no walk", async () => {
    await refreshAllAt(T);
    const walks: MissingWalkMemo = { directoryVersion: null };
    expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: T, walks })).toBe(0);
    expect(walks.directoryVersion).not.toBeNull();
    const mine = [PL.a1bk, PL.a1nyc];
    const before = (await allStored()).get(PL.a1nyc);
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const caller = { env: env(), practiceId: 'pt_a', userId: 'us_summary_test', role: 'practice_admin' as const, providerId: null };
    const saved = await addTimeOff(t.db, caller, { provider_id: 'pr_a1', start_date: day(T.getTime()), end_date: day(T.getTime() + 10 * 86_400_000) }, { now: T, allowStranded: true });
    try {
      expect(saved.saved).toBe(true);
      const marked = await t.db.selectFrom('availability_summaries').select('provider_location_id').where('env', '=', env())
        .where(sql<boolean>`computed_at = '-infinity'::timestamptz`).orderBy('provider_location_id').execute();
      expect(marked.map((r) => r.provider_location_id)).toEqual(mine);
      const served = await readStoredSummaries(t.db, env(), mine, { nowMs: at(1).getTime(), maxAgeMs: MAX_SUMMARY_TTL_MS, activeOnly: true });
      expect(served.size).toBe(0);
      // The others are young at at(1): the pass rewrites these two alone, from the schedule with the time off.
      expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: at(1), walks })).toBe(mine.length);
      const fresh = await directoryAvailability(t.db, { env: env(), providerLocationIds: mine, now: at(1) });
      expect(fresh.get(PL.a1nyc)).not.toEqual(before);
      const stored = await allStored();
      for (const id of mine) expect(stored.get(id), id).toEqual(fresh.get(id));
    } finally {
      await t.db.deleteFrom('time_off').where('env', '=', env()).where('provider_id', '=', 'pr_a1').execute();
    }
    await refreshAllAt(T);
  });

  test("a batch's write leaves out a provider-location whose provider's calendar moved after the batch read it, and a row refreshed meanwhile", async () => {
    await refreshAllAt(T);
    const id = PL.a1nyc;
    const { provider_id: providerId } = await t.db.selectFrom('provider_locations').select('provider_id').where('env', '=', env()).where('id', '=', id).executeTakeFirstOrThrow();
    const version = async () =>
      (await sql<{ v: string }>`SELECT coalesce((SELECT version::text FROM calendar_versions WHERE env = ${env()} AND provider_id = ${providerId}), '0') AS v`.execute(t.db)).rows[0]!.v;
    const computedAt = async () => new Date((await t.db.selectFrom('availability_summaries').select('computed_at').where('env', '=', env()).where('provider_location_id', '=', id).executeTakeFirstOrThrow()).computed_at).getTime();
    const summary = new Map([[id, (await allStored()).get(id)!]]);
    const read = await version();
    const opts = (v: string, replaceOlderThan: Date) => ({ replaceOlderThan, calendars: new Map([[id, { providerId, version: v }]]) });
    // A practice's schedule change commits between the batch's read and its write.
    await t.db.transaction().execute((trx) => lockProviderSchedule(trx, env(), providerId));
    const moved = await version();
    expect(moved).not.toBe(read);
    expect(await writeSummaries(t.db, env(), at(REFRESH_OLDER_THAN_MS + 1), summary, opts(read, at(1)))).toBe(0);
    expect(await computedAt()).toBe(T.getTime());
    expect(await writeSummaries(t.db, env(), at(REFRESH_OLDER_THAN_MS + 1), summary, opts(moved, at(1)))).toBe(1);
    expect(await computedAt()).toBe(at(REFRESH_OLDER_THAN_MS + 1).getTime());
    // Another batch's write of a row this one found old: kept.
    expect(await writeSummaries(t.db, env(), at(REFRESH_OLDER_THAN_MS + 2), summary, opts(moved, at(1)))).toBe(0);
    expect(await computedAt()).toBe(at(REFRESH_OLDER_THAN_MS + 1).getTime());
  });

  test("a pass during a practice's schedule change never leaves a summary of the schedule before it", async () => {
    // The change (time off over all of pr_a1's next 120 days) is saved in a transaction held open
    // while a pass recomputes every row. On PostgreSQL the pass reads the schedule before the change
    // and computes from it, and its write of pr_a1's rows then waits for the change (the version's row
    // `FOR SHARE`) and leaves them out; without that, it would write them once the change commits,
    // from the schedule before it. On PGlite the transaction holds the engine: the pass runs after it.
    const now = at(REFRESH_OLDER_THAN_MS + 1);
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const mine = [PL.a1nyc, PL.a1bk];
    await refreshAllAt(T);
    let pass: Promise<number> | undefined;
    await t.db.transaction().execute(async (trx) => {
      await lockProviderSchedule(trx, env(), 'pr_a1');
      await trx.insertInto('time_off')
        .values({ id: 'to_during_pass', env: env(), practice_id: 'pt_a', provider_id: 'pr_a1', start_date: day(now.getTime() - 2 * 86_400_000), end_date: day(now.getTime() + 120 * 86_400_000) })
        .execute();
      // As the change marks them (stranded.ts): old, so the pass recomputes them.
      await trx.updateTable('availability_summaries').set({ computed_at: sql<Date>`'-infinity'::timestamptz` })
        .where('env', '=', env()).where('provider_location_id', 'in', mine).execute();
      pass = refreshAvailabilitySummaries(t.db, { env: env(), now, batchSize: 1 });
      // PostgreSQL: commit only once the pass waits for this transaction.
      if (testDatabaseUrl) {
        await waitFor(async () => (await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO availability_summaries AS s%'`.execute(t.db)).rows[0]!.n > 0);
      }
    });
    await pass;
    const fresh = await directoryAvailability(t.db, { env: env(), providerLocationIds: mine, now });
    expect(fresh.get(PL.a1nyc)!.new.next_28_days).toBe('none');
    const stored = await allStored();
    for (const id of mine) expect(stored.get(id) ?? fresh.get(id), id).toEqual(fresh.get(id));
    await t.db.deleteFrom('time_off').where('id', '=', 'to_during_pass').execute();
    await refreshAllAt(T);
  });

  test('a pass finding the environment\'s lease held by another process ends without writing; once it is given up, a pass runs', async () => {
    await t.db.deleteFrom('availability_summaries').execute();
    // Another process's pass: the lease, under another holder.
    expect(await takeLease(t.db, refreshLeaseName(env()), 'another-process', { ttlMs: 60_000 })).toBe(true);
    expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: T })).toBe(0);
    expect(await storedIds()).toEqual([]);
    await releaseLease(t.db, refreshLeaseName(env()), 'another-process');
    expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: T })).toBe((await activeIds()).length);
    expect(await t.db.selectFrom('job_leases').selectAll().execute()).toEqual([]);
  });

  test.runIf(testDatabaseUrl)('on PostgreSQL, the lease is the schema\'s own: another deployment in the same database holding it does not stop a pass', async () => {
    const other = await freshDatabase();
    try {
      await t.db.deleteFrom('availability_summaries').execute();
      expect(await takeLease(other.db, refreshLeaseName(env()), 'another-deployment', { ttlMs: 60_000 })).toBe(true);
      expect(await refreshAvailabilitySummaries(t.db, { env: env(), now: T })).toBe((await activeIds()).length);
    } finally {
      await other.close();
    }
  });
});

describe('listings serve stored rows younger than 60 s', () => {
  test('output is what directoryAvailability computes for the same now, from rows alone (no computation)', async () => {
    await refreshAllAt(T);
    const plain = await page(T);
    const cache = new AvailabilityCache();
    const stored = await page(T, cache);
    expect(stored).toEqual(plain);
    // Every summary came from the rows: the memo missed each once and now holds them all.
    expect(cache.misses).toBe(plain.entities.length);
    expect(cache.size).toBe(plain.entities.length);
    const views = await loadProviderLocationViews(t.db, devA, { ids: [PL.a1nyc, PL.a1bk, PL.virt], publicBaseUrl: 'http://x', now: T });
    const viewsStored = await loadProviderLocationViews(t.db, devA, { ids: [PL.a1nyc, PL.a1bk, PL.virt], publicBaseUrl: 'http://x', now: T, cache: new AvailabilityCache() });
    expect(viewsStored).toEqual(views);
  });

  test('a fresh row is served (a row made different shows), until it is 60 s old; a row from the future is not', async () => {
    await refreshAllAt(T);
    const computed = await entity(T, PL.a1nyc);
    expect(computed.new_patient_availability.next_28_days).toBe('available');
    await tamper(PL.a1nyc, T);
    const within = await entity(at(MAX_SUMMARY_TTL_MS - 1), PL.a1nyc, new AvailabilityCache());
    expect(within.new_patient_availability).toEqual({ next_28_days: 'none', url: computed.new_patient_availability.url });
    expect(within.existing_patient_availability).toEqual(computed.existing_patient_availability);
    const view = (await loadProviderLocationViews(t.db, devA, { ids: [PL.a1nyc], publicBaseUrl: 'http://x', now: at(30_000), cache: new AvailabilityCache() })).get(PL.a1nyc)!;
    expect(view.first_availability_date_in_provider_local_time).toBe('2099-01-01');

    const expired = await entity(at(MAX_SUMMARY_TTL_MS), PL.a1nyc, new AvailabilityCache());
    expect(expired.new_patient_availability.next_28_days).toBe('available');
    expect(expired).toEqual(await entity(at(MAX_SUMMARY_TTL_MS), PL.a1nyc));
    const future = await entity(at(-1), PL.a1nyc, new AvailabilityCache());
    expect(future.new_patient_availability.next_28_days).toBe('available');
  });

  test('a stored row is memoised only until it is 60 s old, not 60 s after it was read', async () => {
    await refreshAllAt(T);
    await tamper(PL.a1nyc, T);
    const cache = new AvailabilityCache();
    expect((await entity(at(50_000), PL.a1nyc, cache)).new_patient_availability.next_28_days).toBe('none');
    expect((await entity(at(MAX_SUMMARY_TTL_MS - 1), PL.a1nyc, cache)).new_patient_availability.next_28_days).toBe('none');
    expect((await entity(at(MAX_SUMMARY_TTL_MS + 1), PL.a1nyc, cache)).new_patient_availability.next_28_days).toBe('available');
  });

  test('a stale row (older than 60 s) is not served; without rows the listing computes as before', async () => {
    await refreshAllAt(T);
    await tamper(PL.a1nyc, at(-MAX_SUMMARY_TTL_MS));
    expect((await entity(T, PL.a1nyc, new AvailabilityCache())).new_patient_availability.next_28_days).toBe('available');
    await t.db.deleteFrom('availability_summaries').execute();
    expect(await page(T, new AvailabilityCache())).toEqual(await page(T));
  });

  test('recent_changes_72hrs listings read the rows by id', async () => {
    await refreshAllAt(T);
    await tamper(PL.a1nyc, T);
    const recent = await listSchedulableEntities(t.db, devA, {
      page: 0, pageSize: 100, recentOnly: true, publicBaseUrl: t.config.publicBaseUrl, now: at(1000), cache: new AvailabilityCache(),
      recentWindowReadMax: 1_000_000,
    });
    const e = recent.entities.find((x) => x.id === PL.a1nyc);
    expect(e, 'the fixture went live after T − 72 h').toBeDefined();
    expect(e!.new_patient_availability.next_28_days).toBe('none');
  });

  test('a page served within the memo lifetime is not read again alongside; a summary evicted meanwhile is still read from its row', async () => {
    await refreshAllAt(T);
    // Room for the page's five summaries and one more.
    const cache = new AvailabilityCache({ maxEntries: 6 });
    expect((await entity(T, PL.a1bk, cache)).new_patient_availability.next_28_days).toBe('limited');
    expect(cache.pageMemoised(`${env()}|${devA.developerId}|0|100`, T.getTime())).toBe(true);
    // Two more summaries evict the page's first (a1bk); its row now says otherwise.
    await directoryAvailability(t.db, { env: env(), providerLocationIds: [PL.out, PL.other], now: T, cache });
    await tamper(PL.a1bk, T);
    expect((await entity(at(1000), PL.a1bk, cache)).new_patient_availability.next_28_days).toBe('none');
    // Served from the memo: unchanged for the others.
    expect((await entity(at(1000), PL.a1nyc, cache)).new_patient_availability.next_28_days).toBe('available');
  });

  test('through the API: a row the refresher just wrote is what GET /v1/schedulable_entities shows', async () => {
    await t.db.deleteFrom('availability_summaries').execute();
    expect(await refreshAvailabilitySummaries(t.db, { env: env() })).toBe((await activeIds()).length);
    await tamper(PL.b1nyc, new Date());
    const r = await get(t, '/v1/schedulable_entities', f.tokenA);
    expect(r.status).toBe(200);
    const e = r.body.data.schedulable_entities.find((x: { id: string }) => x.id === PL.b1nyc);
    expect(e.new_patient_availability).toEqual({ next_28_days: 'none', url: expect.any(String) });
    expect(e.existing_patient_availability.next_28_days).toBe('available');
  });
});

describe('provider-location views computed from current data', () => {
  test('use the clock they are given, and answer as with a new one', async () => {
    /** A real clock that counts the local dates asked of it. */
    class CountingClock extends LocalClock {
      todays = 0;
      override today(zone: string, now: Date): string {
        this.todays++;
        return super.today(zone, now);
      }
    }
    const shared = new CountingClock();
    const ids = [PL.a1nyc, PL.a1bk, PL.virt];
    const plain = await loadProviderLocationViews(t.db, devA, { ids, publicBaseUrl: 'http://x', now: T });
    const first = await loadProviderLocationViews(t.db, devA, { ids, publicBaseUrl: 'http://x', now: T, clock: shared });
    const again = await loadProviderLocationViews(t.db, devA, { ids, publicBaseUrl: 'http://x', now: T, clock: shared });
    expect(first).toEqual(plain);
    expect(again).toEqual(plain);
    expect(shared.todays).toBe(2 * ids.length);
  });
});

describe('AvailabilityCache page marks', () => {
  const summary: AvailabilitySummary = { new: { next_28_days: 'none' }, existing: { next_28_days: 'none' } };
  test('a page is memoised until the first of its summaries expires; not at all when one is missing', () => {
    const c = new AvailabilityCache();
    c.set('sandbox', 'a', summary, 1000);
    c.set('sandbox', 'b', summary, 5000);
    c.notePage('p', 'sandbox', ['a', 'b']);
    expect(c.pageMemoised('p', 1000 + MAX_SUMMARY_TTL_MS - 1)).toBe(true);
    expect(c.pageMemoised('p', 1000 + MAX_SUMMARY_TTL_MS)).toBe(false);
    c.notePage('q', 'sandbox', ['a', 'missing']);
    expect(c.pageMemoised('q', 1000)).toBe(false);
    expect(c.pageMemoised('other', 1000)).toBe(false);
    c.notePage('p', 'sandbox', ['b']);
    c.clear();
    expect(c.pageMemoised('p', 1000)).toBe(false);
  });
});

describe('the refresh job', () => {
  const deps = () => ({ db: t.db, config: t.config, engine: t.handle.engine });
  const silent = pino({ level: 'silent' });

  test('refreshes, runs one pass at a time, and writes nothing once stopped', async () => {
    await t.db.deleteFrom('availability_summaries').execute();
    const active = await activeIds();
    const job = availabilitySummaryRefreshJob(deps(), { batchSize: 2 });
    const loop = startLoop({ ...job, intervalMs: 20 }, silent);
    try {
      await waitFor(async () => (await storedIds()).length === active.length);
      await waitFor(async () => loop.stats().passes >= 3);
    } finally {
      await loop.stop();
    }
    // Every row written once: the first pass wrote them all, the next ones found them young.
    expect(loop.stats()).toMatchObject({ job: 'availability-summary-refresh', failures: 0, items: active.length });
    const after = loop.stats().passes;
    await t.db.deleteFrom('availability_summaries').execute();
    await new Promise((r) => setTimeout(r, 200));
    expect(await storedIds()).toEqual([]);
    expect(loop.stats().passes).toBe(after);
  });

  test('stop() during a pass ends it after the batch in progress', async () => {
    await t.db.deleteFrom('availability_summaries').execute();
    const loop = startLoop({ ...availabilitySummaryRefreshJob(deps(), { batchSize: 1 }), intervalMs: 60_000 }, silent);
    await waitFor(async () => (await storedIds()).length > 0, 15_000);
    await loop.stop();
    const written = (await storedIds()).length;
    await new Promise((r) => setTimeout(r, 200));
    expect((await storedIds()).length).toBe(written);
  });

  test('startJobs runs it', async () => {
    await t.db.deleteFrom('availability_summaries').execute();
    const active = await activeIds();
    const jobs = startJobs(deps(), silent);
    try {
      await waitFor(async () => (await storedIds()).length === active.length);
    } finally {
      await jobs.stop();
    }
  });
});
