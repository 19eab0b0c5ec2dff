/**
 * The plans of the directory's single reads (docs/performance.md, "Directory reads (issue #20 §7)"),
 * of availability's fresh statement for one provider-location, and of the provider-location
 * contexts a reschedule or a practice's move loads (docs/performance.md, "Plans made once for the
 * hot reads": a statement marked for its generic plan is explained with it, as both engines run it),
 * and of the schedule data a reschedule, a calendar, availability lists and the summary refresh load
 * (one provider-location and 250; a day, a week and 90 days; with held time and without: its generic
 * plan serves every window and count, docs/performance.md, "The schedule data's plan"), and of
 * the context a booking reads when it keeps none for its provider-location and day, and of what a
 * summary refresh pass lists (a slice of provider-locations, the oldest rows). Every
 * provider has booked (held) time and time off, some provider-locations calendar timeslots, and each
 * its practice's setting of a visit reason (read with the durations).
 * On a generated directory of a few thousand provider-locations, analysed as every import leaves
 * it and in its steady state (changes older than the 72-hour window, availability summaries stored
 * by the refresher, the tables read vacuumed all-visible as autovacuum leaves them: an index-only
 * scan is then priced cheap, and a plan may prefer one that filters what an index could have
 * sought, as the held time's did, docs/performance.md, "Held time read one provider at a time"),
 * and with availability read twice (the second time from kept schedule data), each read is made
 * through the app while its statements are captured, and every statement is run again under `EXPLAIN (ANALYZE)` with the parameters it ran with. Then the
 * directory is doubled (as many provider-locations again, in the same areas, none with a facility
 * and none asked for) and the same reads are planned again on a new app (its memo empty).
 *
 * Two checks per read, at both sizes:
 * - no sequential scan of a big table: the directory's own tables, and any other table of 1,000
 *   rows or more here (small reference tables, specialties or visit reasons, are read whole by design);
 * - the rows the statements read (every scan's rows and the rows its filters removed, times its
 *   loops) do not grow with the directory: at most 1.5 times as many at twice the size, since the
 *   answer is the same. A count of the whole directory, an index range wider than the answer or a
 *   join over every location near a ZIP would double.
 */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { missingInSlice, oldestRows } from '../../src/domain/availability/summary-due.js';
import { refreshAvailabilitySummaries } from '../../src/domain/availability/summary-refresh.js';
import { createDeveloper, type NewDeveloper } from '../../src/domain/developers/create-developer.js';
import type { DirectoryDocument } from '../../src/domain/directory/document.js';
import { generateDirectory } from '../../src/domain/directory/seed.js';
import { analyzeDirectory } from '../../src/domain/directory/write/analyze.js';
import { SUMMARY_STATISTICS_TARGET } from '../../src/db/migrations/0028_summary_statistics_target.js';
import { loadProviderLocations, loadScheduleData } from '../../src/domain/scheduling/schedule-data.js';
import { loadDurations } from '../../src/domain/scheduling/visit-reason-durations.js';
import { contextDay, loadBookingContext } from '../../src/domain/appointments/booking-context.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { buildApp } from '../../src/http/app.js';
import { TEST_KEY_ENCRYPTION_KEY } from '../helpers/app.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { scaled } from '../helpers/scale.js';
import { wantsGenericPlan } from '../../src/db/generic-plan.js';
import { explain, isRead, planNodes, planText, StatementCapture, type PlanNode } from '../helpers/statement-capture.js';

const BIG_TABLES = [
  'provider_locations', 'providers', 'locations', 'developer_provider_locations', 'provider_location_search', 'facilities',
  'weekly_schedules', 'availability_summaries', 'directory_changes', 'provider_location_insurance_plans',
];
/** Any table with at least this many rows counts as big too. */
const BIG_ROWS = 1000;
/** Rows read at twice the directory, at most, per row read at its size (plus a few for rounding). */
const FLAT = 1.5;
const READS = [
  'provider-location', 'providers by 50 NPIs', 'schedulable entities page of 100', 'facilities by ZIP', 'availability of one provider-location',
  'availability of one provider-location again (its schedule data kept)',
  'provider-location contexts (one, and 50)', 'schedule data (one provider-location and 250; a day, a week, 90 days)',
  'visit reason durations (one provider-location, and 50)', 'booking context (a cold booking, with an insurance plan and without)',
  'summary refresh listings (a slice of provider-locations, the oldest rows)',
] as const;
/**
 * Reads whose unmarked statements are explained twice: planned for their values, and with their
 * generic plan, which PostgreSQL's `auto` may settle on after five executions (the booking
 * context's counts in a test session: 5 custom plans, then generic ones); both must pass.
 */
const BOTH_PLANS = new Set<string>(['booking context (a cold booking, with an insurance plan and without)']);
/** Lists of the whole directory: what they read grows with it, but only with the caller's own rows. */
const LISTS = ['NPI list'] as const;
type Read = (typeof READS)[number] | (typeof LISTS)[number];

interface Statement {
  sql: string;
  plan: string[];
  seqScans: string[];
  /** Rows read: every node that scans a table or an index, its rows and those its filters removed, times its loops. */
  rowsRead: number;
  /** The tables its nodes that ran read (through an index or not). */
  tables: string[];
  /** How the nodes that ran read `developer_provider_locations`: node type and index. */
  tableReads: string[];
  /** Its nodes that ran and hash their input (a hashed aggregate for DISTINCT or GROUP BY, a hash join's Hash). */
  hashes: string[];
}

let h: TestDatabase;
let config: Config;
let mine: NewDeveloper;
let doc: DirectoryDocument;
const capture = new StatementCapture();
const big = new Set(BIG_TABLES);
const keyHistogram: Record<string, number> = {};
const phases: Record<'small' | 'large', Map<Read, Statement[]>> = { small: new Map(), large: new Map() };
const sizes = { small: 0, large: 0 };
/** Every developer's directory rows, at each phase. */
const allRows = { small: 0, large: 0 };

function rowsRead(plan: PlanNode): number {
  let n = 0;
  for (const node of planNodes(plan)) {
    if (node['Relation Name'] === undefined && node['Index Name'] === undefined) continue;
    const removed = Number(node['Rows Removed by Filter'] ?? 0) + Number(node['Rows Removed by Index Recheck'] ?? 0);
    n += ((node['Actual Rows'] ?? 0) + removed) * (node['Actual Loops'] ?? 1);
  }
  return n;
}

/**
 * A directory in service: its additions and changes older than the 72-hour window, summaries
 * stored, statistics fresh, the tables it reads all-visible. The other developer's directory stays just imported: its changes are in
 * the environment's window, as another developer's import of the last 72 hours is in service.
 */
async function steadyState(): Promise<void> {
  // Right after an import every provider-location is listed as added in `recent_change_summary`,
  // a list that grows with the directory by definition.
  const past = new Date(Date.now() - 100 * 3600_000);
  const ours = sql`(SELECT provider_location_id FROM developer_provider_locations WHERE developer_id = ${mine.developer_id})`;
  await sql`UPDATE developer_provider_locations SET added_at = ${past} WHERE developer_id = ${mine.developer_id}`.execute(h.db);
  await sql`UPDATE directory_changes SET changed_at = ${past} WHERE provider_location_id IN ${ours}`.execute(h.db);
  await sql`UPDATE provider_locations SET go_live_at = ${past}, profile_updated_at = ${past} WHERE id IN ${ours}`.execute(h.db);
  // As autovacuum would have done in service: the index entries of the rows before they were
  // backdated (an addition "in the window") are gone.
  for (const table of ['developer_provider_locations', 'directory_changes', 'provider_locations']) await sql`VACUUM ${sql.table(table)}`.execute(h.db);
  while ((await refreshAvailabilitySummaries(h.db, { env: config.appEnv })) > 0);
  // As every import leaves the tables (src/domain/directory/write/analyze.ts) and autovacuum the
  // summaries; their `computed_at` then moves on past the statistics, as the refresher moves it.
  await analyzeDirectory(h.db);
  await sql`ANALYZE availability_summaries`.execute(h.db);
  await sql`UPDATE availability_summaries SET computed_at = now()`.execute(h.db);
  await sql`VACUUM availability_summaries`.execute(h.db);
  await allVisible(['developer_provider_locations', 'directory_changes', 'provider_locations', 'availability_summaries',
    'appointments', 'appointment_holds', 'time_off', 'calendar_timeslots', 'provider_location_visit_reasons']);
}

/**
 * VACUUM `tables` again until every page is marked all-visible, as autovacuum leaves a table in
 * service. A transaction open elsewhere in the database (another test file's, on PostgreSQL) keeps
 * VACUUM from marking the rows written since it began, and without the marks an index-only scan
 * costs as much as an index scan: the planner then chooses other plans than in service (measured:
 * the NPI list and the page of 100 read by sequential scans while a snapshot was held). Those
 * transactions are short; this waits them out (at most ~30 s).
 */
async function allVisible(tables: string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { rows } = await sql<{ relname: string; relpages: number; relallvisible: number }>`
      SELECT relname, relpages, relallvisible FROM pg_class WHERE oid = ANY(${tables}::regclass[])`.execute(h.db);
    const behind = rows.filter((r) => r.relallvisible < r.relpages).map((r) => r.relname);
    if (behind.length === 0) return;
    if (Date.now() > deadline) throw new Error(`pages not all-visible after 30 s of VACUUM: ${behind.join(', ')}`);
    await new Promise((r) => setTimeout(r, 250));
    for (const table of behind) await sql`VACUUM ${sql.table(table)}`.execute(h.db);
  }
}

/**
 * Schedule rows as a directory in service has them, for the provider-locations of `d`: every
 * provider not yet holding time gets six booked appointments (a week apart, on one of its
 * provider-locations, so held time never overlaps) and four spans of time off, every
 * provider-location its practice's duration for a visit reason; the provider-locations `TIMESLOTS`
 * lists get calendar timeslots (eight a day, 30 days back to 100 ahead). Analysed, as autovacuum
 * leaves the tables.
 */
async function scheduleRows(d: DirectoryDocument, withTimeslots: boolean): Promise<void> {
  const ids = d.provider_locations!.map((x) => `${x.provider_id}|${x.location_id}`);
  const env = config.appEnv;
  await sql`
    INSERT INTO patients (id, env, developer_id, first_name, last_name, date_of_birth, sex_at_birth, phone_number, email_address, address)
    VALUES ('pa_plans', ${env}, ${mine.developer_id}, 'Plan', 'Patient', '1980-01-01', 'female', '2125550123', 'plans@example.org', '{}')
    ON CONFLICT (id) DO NOTHING`.execute(h.db);
  await sql`
    INSERT INTO appointments (id, env, developer_id, booked_by_client_id, patient_id, provider_location_id, provider_id, location_id,
      visit_reason_id, patient_type, start_time, end_time, time_zone, appointment_status, confirmation_type, visit_type)
    SELECT 'ap_plans_' || pl.id || '_' || k, pl.env, ${mine.developer_id}, ${mine.client_id}, 'pa_plans', pl.id, pl.provider_id, pl.location_id,
      'vr', 'new', date_trunc('day', now()) + make_interval(days => 7 * k - 10, hours => 14),
      date_trunc('day', now()) + make_interval(days => 7 * k - 10, hours => 14, mins => 30), 'UTC', 'confirmed', 'auto', 'in_person'
    FROM (SELECT DISTINCT ON (provider_id) * FROM provider_locations WHERE env = ${env} AND id = ANY(${ids}::text[]) ORDER BY provider_id, id) pl,
      generate_series(0, 5) k
    WHERE NOT EXISTS (SELECT 1 FROM appointment_holds h WHERE h.env = pl.env AND h.provider_id = pl.provider_id)`.execute(h.db);
  await sql`
    INSERT INTO appointment_holds (appointment_id, kind, env, provider_id, during)
    SELECT a.id, 'current', a.env, a.provider_id, tstzrange(a.start_time, a.end_time) FROM appointments a
    WHERE a.developer_id = ${mine.developer_id} AND NOT EXISTS (SELECT 1 FROM appointment_holds h WHERE h.appointment_id = a.id)`.execute(h.db);
  await sql`
    INSERT INTO time_off (id, env, practice_id, provider_id, start_date, end_date)
    SELECT 'to_plans_' || p.id || '_' || k, p.env, p.practice_id, p.id, current_date + 20 * k, current_date + 20 * k + 2
    FROM providers p, generate_series(-1, 2) k
    WHERE p.env = ${env} AND p.id IN (SELECT provider_id FROM provider_locations WHERE env = ${env} AND id = ANY(${ids}::text[]))
      AND NOT EXISTS (SELECT 1 FROM time_off t WHERE t.env = p.env AND t.provider_id = p.id)`.execute(h.db);
  // A practice's visit reason setting (an override of the duration) on every provider-location. (On
  // every second one, ~1,250 rows in 15 pages, PostgreSQL 15 rightly reads the table whole for any id
  // list, cost 43 against 57 for its primary key; from ~2,500 rows on it takes the key: measured.)
  const overridden = d.provider_locations!;
  await sql`
    INSERT INTO provider_location_visit_reasons (env, provider_location_id, visit_reason_id, duration_new_minutes)
    SELECT ${env}, o.pl, o.vr, 45 FROM unnest(${overridden.map((x) => `${x.provider_id}|${x.location_id}`)}::text[],
      ${overridden.map((x) => visitReason(x.provider_id, d))}::text[]) AS o(pl, vr)
    ON CONFLICT DO NOTHING`.execute(h.db);
  if (withTimeslots) {
    await sql`
      INSERT INTO calendar_timeslots (id, env, provider_id, location_id, local_date, start_local, time_zone, start_utc)
      SELECT 'ts_plans_' || pl.id || '_' || d || '_' || s, pl.env, pl.provider_id, pl.location_id, current_date + d,
        (current_date + d)::timestamp + make_interval(mins => 540 + 60 * s), 'UTC', ((current_date + d)::timestamp + make_interval(mins => 540 + 60 * s)) AT TIME ZONE 'UTC'
      FROM provider_locations pl, generate_series(-30, 100) d, generate_series(0, 7) s
      WHERE pl.env = ${env} AND pl.id = ANY(${TIMESLOTS.map((i) => ids[i]!)}::text[])`.execute(h.db);
  }
  await sql`ANALYZE patients, appointments, appointment_holds, time_off, calendar_timeslots, provider_location_visit_reasons`.execute(h.db);
}

/** The provider-locations (of the first directory, by position) with calendar timeslots. */
const TIMESLOTS = Array.from({ length: 40 }, (_, i) => 300 + i);

/** A visit reason the provider offers. */
function visitReason(providerId: string, d: DirectoryDocument = doc): string {
  const p = d.providers!.find((x) => x.id === providerId)!;
  return p.default_visit_reason_id ?? p.visit_reason_ids![0]!;
}

/** Makes each read through a new app (its memo empty) and plans every statement it ran. */
async function planReads(): Promise<Map<Read, Statement[]>> {
  const db = capture.on(h.db);
  const app: FastifyInstance = await buildApp({ config, db });
  try {
    const token = await app.inject({
      method: 'POST',
      url: '/auth/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: mine.client_id, client_secret: mine.client_secret, audience: config.audience },
    });
    const headers = { authorization: `Bearer ${(token.json() as { access_token: string }).access_token}` };
    const pl = doc.provider_locations![5]!;
    const plId = (x: { provider_id: string; location_id: string }) => `${x.provider_id}|${x.location_id}`;
    // Reads made through the domain rather than a URL: what a reschedule, a practice's move or
    // calendar loads of the provider-locations concerned (src/domain/scheduling/schedule-data.ts).
    const calls: Partial<Record<Read, () => Promise<unknown>>> = {
      'provider-location contexts (one, and 50)': async () => {
        await loadProviderLocations(db, config.appEnv, [plId(pl)]);
        await loadProviderLocations(db, config.appEnv, doc.provider_locations!.slice(200, 250).map(plId));
      },
      // What a reschedule (one provider-location, a day), a calendar (a week), availability lists and
      // the summary refresh (250, 90 days; weekly blocks already read) load.
      'schedule data (one provider-location and 250; a day, a week, 90 days)': async () => {
        const one = await loadProviderLocations(db, config.appEnv, [plId(doc.provider_locations![TIMESLOTS[0]!]!)]);
        const many = await loadProviderLocations(db, config.appEnv, doc.provider_locations!.slice(300, 550).map(plId));
        const from = Date.now() + 86_400_000;
        for (const pls of [one, many]) {
          const reasons = [...new Set([...pls.values()].flatMap((x) => x.visitReasonIds))];
          for (const days of [1, 7, 90]) {
            const window = { fromMs: from, toMs: from + days * 86_400_000 };
            for (const withHolds of [true, false]) await loadScheduleData(db, config.appEnv, pls, window, { withHolds, visitReasonIds: reasons });
            await loadScheduleData(db, config.appEnv, pls, window, { withHolds: true, visitReasonIds: reasons, blocks: new Map() });
          }
        }
      },
      // What a reschedule checks its visit reason against, and a practice's visit reason settings list.
      'visit reason durations (one provider-location, and 50)': async () => {
        await loadDurations(db, config.appEnv, [plId(pl)], [visitReason(pl.provider_id)]);
        const fifty = doc.provider_locations!.slice(400, 450);
        await loadDurations(db, config.appEnv, fifty.map(plId), [...new Set(fifty.map((x) => visitReason(x.provider_id)))]);
      },
      // What a booking reads when it keeps no context for its provider-location and day: one with
      // calendar timeslots on a day its provider has time off (every provider has some).
      'booking context (a cold booking, with an insurance plan and without)': async () => {
        const principal = { kind: 'client' as const, env: config.appEnv, developerId: mine.developer_id, clientId: mine.client_id, scopes: new Set<string>() };
        const at = doc.provider_locations![TIMESLOTS[0]!]!;
        const where = { providerLocationId: plId(at), visitReasonId: visitReason(at.provider_id), day: contextDay(Date.now() + 20 * 86_400_000) };
        const ctx = await loadBookingContext(db, principal, where);
        expect(ctx.pl?.id).toBe(plId(at));
        expect(ctx.schedule.pushed.get(plId(at))?.length ?? 0).toBeGreaterThan(0);
        expect(ctx.schedule.timeOff.size).toBeGreaterThan(0);
        await loadBookingContext(db, principal, { ...where, insurancePlanId: doc.insurance_plans![0]!.id });
      },
      // What a summary refresh pass lists (src/domain/availability/summary-due.ts): the first slice of
      // the environment's provider-locations (none missing here), and the oldest batch of rows (all
      // are older than a cutoff an hour ahead).
      'summary refresh listings (a slice of provider-locations, the oldest rows)': async () => {
        const slice = await missingInSlice(db, config.appEnv, '');
        expect(slice.last).not.toBeNull();
        expect((await oldestRows(db, config.appEnv, new Date(Date.now() + 3_600_000), undefined, 250)).length).toBe(250);
      },
    };
    const urls: Partial<Record<Read, string>> = {
      'provider-location': `/v1/provider_locations/${encodeURIComponent(`${pl.provider_id}|${pl.location_id}`)}`,
      'providers by 50 NPIs': `/v1/providers?npis=${doc.providers!.slice(100, 150).map((p) => p.npi).join(',')}`,
      'schedulable entities page of 100': '/v1/schedulable_entities?page_size=100&page=3',
      'facilities by ZIP': '/v1-beta/facilities?zip_code=10001&max_distance_to_patient_mi=100',
      'NPI list': '/v1/reference/npi?page_size=60000',
      // A new app keeps no schedule data yet: the availability's fresh statement runs.
      'availability of one provider-location': `/v1/provider_locations/availability?provider_location_ids=${encodeURIComponent(`${pl.provider_id}|${pl.location_id}`)}&visit_reason_id=${visitReason(pl.provider_id)}&patient_type=new`,
      // The same read right after: the app keeps its schedule data, and checks versions and held time.
      'availability of one provider-location again (its schedule data kept)': `/v1/provider_locations/availability?provider_location_ids=${encodeURIComponent(`${pl.provider_id}|${pl.location_id}`)}&visit_reason_id=${visitReason(pl.provider_id)}&patient_type=new`,
    };
    const out = new Map<Read, Statement[]>();
    for (const read of [...READS, ...LISTS]) {
      const call = calls[read];
      const statements = await capture.during(h.db, async () => {
        if (call) return call();
        const res = await app.inject({ url: urls[read]!, headers });
        expect(res.statusCode, urls[read]).toBe(200);
      });
      const planned: Statement[] = [];
      for (const q of statements.filter((s) => isRead(s.sql) && !isRateLimitLookup(s.sql))) {
        const plans = [await explain(h.db, q, { analyze: true })];
        if (BOTH_PLANS.has(read) && !wantsGenericPlan(q.sql)) plans.push(await explain(h.db, q, { analyze: true, generic: true }));
        for (const plan of plans) planned.push({
          sql: q.sql.replace(/\s+/g, ' ').trim(),
          plan: planText(plan),
          // A node that never ran (a branch its one-time filter turned off) read nothing.
          seqScans: planNodes(plan).filter((n) => n['Node Type'] === 'Seq Scan' && n['Actual Loops'] !== 0).map((n) => n['Relation Name']!),
          rowsRead: rowsRead(plan),
          tables: [...new Set(planNodes(plan).filter((n) => n['Relation Name'] !== undefined && n['Actual Loops'] !== 0).map((n) => n['Relation Name']!))],
          tableReads: planNodes(plan)
            .filter((n) => n['Relation Name'] === 'developer_provider_locations' && n['Actual Loops'] !== 0)
            .map((n) => `${n['Node Type']}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}`),
          hashes: planNodes(plan)
            .filter((n) => n['Actual Loops'] !== 0 && (n['Node Type'] === 'Hash' || n['Strategy'] === 'Hashed' || n['Strategy'] === 'Mixed'))
            .map((n) => `${n['Node Type']} ${String(n['Strategy'] ?? '')}`.trim()),
        });
      }
      out.set(read, planned);
    }
    return out;
  } finally {
    await app.close();
  }
}

/**
 * The rate limiter's read of the caller's own limit (src/http/rate-limit.ts): one primary-key lookup
 * of the developer, made by whichever request comes first after its cached value expires, so it is
 * the HTTP front's statement, not a read's (a slow run once put it in the NPI list's).
 */
function isRateLimitLookup(text: string): boolean {
  return /^select "rate_limit_per_minute" from "developers" where "id" = \$1$/.test(text.trim());
}

async function allDirectoryRows(): Promise<number> {
  return (await sql<{ n: number }>`SELECT count(*)::int AS n FROM developer_provider_locations`.execute(h.db)).rows[0]!.n;
}

async function directorySize(): Promise<number> {
  const r = await sql<{ n: number }>`SELECT count(*)::int AS n FROM developer_provider_locations WHERE developer_id = ${mine.developer_id}`.execute(h.db);
  return r.rows[0]!.n;
}

beforeAll(async () => {
  h = await freshDatabase();
  config = loadConfig({ LOG_LEVEL: 'silent', KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY, RATE_LIMIT_PER_MINUTE: '100000' });
  mine = await createDeveloper(h.db, { env: config.appEnv, name: 'Plans' });
  const other = await createDeveloper(h.db, { env: config.appEnv, name: 'Other' });
  // ~2,500 provider-locations for the caller, with a facility at every third in-person one (more
  // than the seed's one in twenty, so that facilities are a table of some size), and ~750 of
  // another developer's.
  doc = generateDirectory(2000, 11);
  doc.facilities = doc.provider_locations!
    .filter((pl, i) => pl.provider_location_type === 'in_person_provider' && i % 3 === 0)
    .map((pl, i) => ({ id: `fa_plans_${i}`, name: `Clinic ${i}`, building_type: i % 2 ? 'clinic' : 'hospital', provider_location_id: `${pl.provider_id}|${pl.location_id}` }));
  await h.db.transaction().execute((trx) => writeDirectory(trx, config.appEnv, doc, { developerId: mine.developer_id }));
  await h.db.transaction().execute((trx) => writeDirectory(trx, config.appEnv, generateDirectory(600, 12), { developerId: other.developer_id }));
  await scheduleRows(doc, true);
  await steadyState();
  sizes.small = await directorySize();
  allRows.small = await allDirectoryRows();
  phases.small = await planReads();

  // Twice the directory: as many provider-locations again, after the first in id order (the page
  // asked for stays the same), none with a facility (the facilities near the ZIP stay the same).
  const more = generateDirectory(2000, 13);
  more.facilities = [];
  await h.db.transaction().execute((trx) => writeDirectory(trx, config.appEnv, more, { developerId: mine.developer_id }));
  await scheduleRows(more, false);
  await steadyState();
  sizes.large = await directorySize();
  allRows.large = await allDirectoryRows();
  phases.large = await planReads();
  for (const r of (await sql<{ relname: string }>`
    SELECT c.relname FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = to_regnamespace(current_schema()) AND c.reltuples >= ${BIG_ROWS}`.execute(h.db)).rows) {
    big.add(r.relname);
  }
  // The key's histogram as the last ANALYZE left it (steadyState analysed both tables).
  for (const r of (await sql<{ table: string; bounds: number | null }>`
    SELECT tablename AS "table", array_length(histogram_bounds, 1) AS bounds FROM pg_stats
    WHERE schemaname = current_schema() AND (tablename, attname) IN (('availability_summaries', 'provider_location_id'), ('provider_locations', 'id'))`.execute(h.db)).rows) {
    keyHistogram[r.table] = r.bounds ?? 0;
  }
}, scaled(300_000));
afterAll(async () => h?.close());

const describeStatements = (list: Statement[]): string =>
  list.map((s) => `${s.rowsRead} rows read by: ${s.sql.slice(0, 400)}\n${s.plan.join('\n')}`).join('\n\n');

describe('directory single reads', () => {
  test('the summaries keep a small statistics sample (migration 0028): 11 histogram bounds of their key where the provider-locations keep 101', () => {
    // An ANALYZE of a table the refresher rewrites every 40 s runs at nearly every look, on PGlite
    // in the engine the API shares: a sample of 3,000 rows, not 30,000 (docs/performance.md).
    expect(keyHistogram.provider_locations).toBe(101);
    expect(keyHistogram.availability_summaries).toBe(SUMMARY_STATISTICS_TARGET + 1);
  });

  test('the directory is big, then twice as big', () => {
    expect(sizes.small).toBeGreaterThan(2000);
    expect(sizes.large).toBeGreaterThanOrEqual(2 * sizes.small - 10);
    for (const t of ['provider_locations', 'providers', 'locations', 'developer_provider_locations', 'facilities', 'weekly_schedules', 'availability_summaries',
      'appointment_holds', 'time_off', 'calendar_timeslots', 'provider_location_visit_reasons']) {
      expect(big.has(t), t).toBe(true);
    }
  });

  for (const read of READS) {
    test(`${read}: no sequential scan of a big table`, () => {
      for (const phase of ['small', 'large'] as const) {
        const statements = phases[phase].get(read)!;
        expect(statements.length, `${read} ran no SELECT`).toBeGreaterThan(0);
        const bad = statements.filter((s) => s.seqScans.some((t) => big.has(t)));
        expect(bad.map((s) => `${s.seqScans.filter((t) => big.has(t)).join(', ')} scanned by:\n${s.sql.slice(0, 600)}\n${s.plan.join('\n')}`), `${read} (${phase})`).toEqual([]);
      }
    });

  }

  for (const read of READS) {
    test(`${read}: the rows read do not grow with the directory`, () => {
      const small = phases.small.get(read)!.reduce((n, s) => n + s.rowsRead, 0);
      const large = phases.large.get(read)!.reduce((n, s) => n + s.rowsRead, 0);
      expect(large, `${read}: ${small} rows read at ${sizes.small}, ${large} at ${sizes.large}\n\n${describeStatements(phases.large.get(read)!)}\n\nat ${sizes.small}:\n${describeStatements(phases.small.get(read)!)}`).toBeLessThanOrEqual(
        FLAT * small + 20,
      );
    });
  }

  // The NPI list reads the directory rows table alone (the provider's NPI is copied onto each row,
  // migration 0027), each row at most once: never the environment's provider-locations or providers,
  // so another developer's import does not slow it. And it reads them in NPI order from the index
  // kept for it, hashing nothing: when the caller holds most of the environment's rows (here 77 %
  // and 87 %) a scan of the whole table, a hash for DISTINCT and a sort of every NPI was priced
  // below the ordered index, and cost twice as long (docs/performance.md, "The NPI list's plan").
  for (const read of LISTS) {
    test(`${read}: reads the caller's rows only by the NPI index, in its order, hashing nothing`, () => {
      for (const phase of ['small', 'large'] as const) {
        const statements = phases[phase].get(read)!;
        expect(statements.length, `${read} ran no SELECT`).toBeGreaterThan(0);
        const detail = `${read} (${phase})\n\n${describeStatements(statements)}`;
        expect(statements.flatMap((st) => st.tableReads.filter((r) => r !== 'Index Only Scan using developer_provider_locations_npi')), detail).toEqual([]);
        expect(statements.flatMap((st) => st.hashes), detail).toEqual([]);
      }
    });
    test(`${read}: reads the directory rows alone, each at most once`, () => {
      for (const phase of ['small', 'large'] as const) {
        const statements = phases[phase].get(read)!;
        expect(statements.length, `${read} ran no SELECT`).toBeGreaterThan(0);
        expect([...new Set(statements.flatMap((st) => st.tables))], `${read} (${phase})\n\n${describeStatements(statements)}`).toEqual(['developer_provider_locations']);
        const n = statements.reduce((m, st) => m + st.rowsRead, 0);
        expect(n, `${read} (${phase}): ${n} rows read, ${allRows[phase]} directory rows in all\n\n${describeStatements(statements)}`).toBeLessThanOrEqual(allRows[phase] + 20);
      }
    });
  }
});
