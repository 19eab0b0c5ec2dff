/**
 * Schedulable entities (docs/api/directory.md#schedulable-entities): the caller's active provider-locations with their
 * availability summaries. The 72-hour change summary of the caller's directory is in
 * recent-change-summary.ts.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.js';
import { epochMsSql } from '../../db/epoch-ms.js';
import type { AvailabilityCache } from '../availability/summary-cache.js';
import { directoryAvailability } from '../availability/directory-availability.js';
import type { PatientTypeAvailability } from '../availability/summaries.js';
import { readStoredSummaries } from '../availability/summary-store.js';
import { RECENT_WINDOW_MS } from './recent-change-summary.js';
import type { DirectoryCaller } from './visible.js';
import { genericPlan } from '../../db/generic-plan.js';

export const SCHEDULE_TYPES = ['provider_location'] as const;

export interface AvailabilityWithUrl extends PatientTypeAvailability {
  url: string;
}

export interface SchedulableEntity {
  id: string;
  npi?: string;
  type: 'provider_location';
  go_live_timestamp_utc: string;
  profile_last_modified_timestamp_utc: string;
  new_patient_availability: AvailabilityWithUrl;
  existing_patient_availability: AvailabilityWithUrl;
  time_zone?: string;
  main_specialty_id?: string;
  main_specialty_name?: string;
}

/** Availability URL for a provider-location, visit reason and patient type (docs/api/availability.md#availability-request). */
export function availabilityUrl(publicBaseUrl: string, plId: string, visitReasonId: string | undefined, patientType: 'new' | 'existing'): string {
  return `${availabilityUrlPrefix(publicBaseUrl, plId, visitReasonId)}${patientType}`;
}

/** `application/x-www-form-urlencoded` encoding of a value, exactly as `URLSearchParams` writes it. */
function formEncode(v: string): string {
  const e = encodeURIComponent(v);
  return /[!'()~]|%20/.test(e) ? e.replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%20/g, '+') : e;
}

/**
 * `new Date(ms).toISOString()`, remembering the last few answers: the entities of a page share
 * their timestamps in long runs (a directory is imported, activated and updated in batches).
 */
function isoMemo(): (ms: number) => string {
  const known = new Map<number, string>();
  return (ms) => {
    let s = known.get(ms);
    if (s === undefined) {
      if (known.size >= 64) known.clear();
      known.set(ms, (s = new Date(ms).toISOString()));
    }
    return s;
  };
}

/** A summary with its URL, keys in the order of the summary itself. */
function withUrl(a: PatientTypeAvailability | undefined, url: string): AvailabilityWithUrl {
  if (!a) return { next_28_days: 'none', url };
  return a.next_available_utc === undefined
    ? { next_28_days: a.next_28_days, url }
    : { next_available_utc: a.next_available_utc, next_28_days: a.next_28_days, url };
}

/** The availability URL up to the `patient_type` value (built once per entity for its two URLs). */
function availabilityUrlPrefix(publicBaseUrl: string, plId: string, visitReasonId: string | undefined): string {
  const reason = visitReasonId ? `&visit_reason_id=${formEncode(visitReasonId)}` : '';
  return `${publicBaseUrl}/v1/provider_locations/availability?provider_location_ids=${formEncode(plId)}${reason}&patient_type=`;
}

interface EntityRow {
  id: string;
  npi: string;
  /** Epoch milliseconds (from the page's JSON). */
  go_live: number;
  profile_updated_at: number;
  time_zone: string;
  main_specialty_id: string | null;
  main_specialty_name: string | null;
  /** The visit reason of the availability URLs: the provider's default, else its first. */
  reason: string | null;
}

/** An `EntityRow` from its JSON array (the column order of `entityPage`'s `json_build_array`). */
function entityRow(a: unknown[]): EntityRow {
  return {
    id: a[0] as string,
    npi: a[1] as string,
    go_live: a[2] as number,
    profile_updated_at: a[3] as number,
    time_zone: a[4] as string,
    main_specialty_id: a[5] as string | null,
    main_specialty_name: a[6] as string | null,
    reason: a[7] as string | null,
  };
}

/**
 * The rows of one page of entities. `page` is a statement yielding the page's `(id, added_at)` in
 * id order with its LIMIT and OFFSET (planned on its own: it is a MATERIALIZED CTE), plus a `total`
 * column with `countInPage`. `count` is a statement counting every entity of the listing: without
 * `countInPage` it runs once, as an InitPlan of the same statement (the page's snapshot); either way
 * it runs alone when the page is empty. Without `count` (a part of a page, counted by its caller)
 * `total` is 0. Only the page's rows are read from their provider-location, provider, location and
 * specialty, by primary key.
 *
 * The lookups are a LATERAL subquery with `LIMIT 1` (an id has one row) on purpose: joined plainly,
 * the planner hashes whole tables for a page of thousands (every provider, location and
 * provider-location of the environment, other developers' included), which makes a page's cost grow
 * with the environment instead of the page (measured in docs/directory-format.md).
 */
async function entityPage(
  db: Db,
  caller: DirectoryCaller,
  page: RawBuilder<unknown>,
  count: RawBuilder<unknown> | undefined,
  countInPage = false,
): Promise<{ rows: EntityRow[]; total: number }> {
  // The page comes back as one JSON value (an array of arrays, in the order `entityRow` reads): one native
  // JSON.parse instead of the driver handling 8 fields per row, 10,000 times.
  const { rows: [agg] } = await genericPlan(sql<{ j: unknown[][] | null; total: string | number | null }>`
    WITH page AS MATERIALIZED (${page})
    SELECT json_agg(json_build_array(page.id, e.npi, e.go_live, e.profile_updated_at, e.time_zone, e.main_specialty_id,
             e.main_specialty_name, e.reason) ORDER BY page.id) AS j,
           min(${countInPage ? sql`page.total` : count ? sql`(${count})` : sql`0`}) AS total
    FROM page
    CROSS JOIN LATERAL (
      SELECT p.npi, ${sql.raw(epochMsSql('greatest(pl.go_live_at, page.added_at)'))} AS go_live,
             ${sql.raw(epochMsSql('pl.profile_updated_at'))} AS profile_updated_at, l.time_zone,
             p.main_specialty_id, s.name AS main_specialty_name, coalesce(p.default_visit_reason_id, p.visit_reason_ids[1]) AS reason
      FROM provider_locations pl
      JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
      JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
      LEFT JOIN specialties s ON s.env = p.env AND s.id = p.main_specialty_id
      WHERE pl.env = ${caller.env} AND pl.id = page.id
      LIMIT 1
    ) e`).execute(db);
  const rows = (agg?.j ?? []).map(entityRow);
  if (rows.length || !count) return { rows, total: Number(agg?.total ?? 0) };
  // An empty page (past the end, or nothing to list): the count alone.
  const c = await sql<{ n: string | number }>`SELECT (${count}) AS n`.execute(db);
  return { rows, total: Number(c.rows[0]?.n ?? 0) };
}

/** A page of the directory larger than this is read in parts of at most this many entities, in parallel. */
export const PAGE_PART_SIZE = 2500;

/**
 * One page of the caller's active directory and its size: an index-only walk of
 * `developer_provider_locations_active` (migration 0008: the developer's rows whose provider-location
 * is active, in id order, with `added_at`) and the stored size (`directorySize`). So a page costs
 * its own rows (and the entries its OFFSET skips), whatever the size of the directory.
 *
 * A page of more than `PAGE_PART_SIZE` entities is read in parts, one statement each, all at once
 * (on PostgreSQL each on its own connection, so the database reads them on several cores while this
 * process parses the first to arrive): a first statement finds the id each part starts at, then each
 * part reads its entities from that id on, up to the next part's first id. Parts never overlap, so
 * an entity is never listed twice on a page, whatever is written meanwhile. The count runs alongside.
 * Measured on a 50,000-entity directory, a page of 10,000 read in 4 parts came ~30 % sooner than in
 * one statement (docs/directory-format.md).
 */
async function directoryPage(
  db: Db,
  caller: DirectoryCaller,
  page: number,
  pageSize: number,
  maxPart = PAGE_PART_SIZE,
): Promise<{ rows: EntityRow[]; total: number }> {
  const count = directorySize(caller);
  if (pageSize <= maxPart) return entityPage(db, caller, directoryPageIds(caller, page, pageSize), count);
  const parts = Math.ceil(pageSize / maxPart);
  const partSize = Math.ceil(pageSize / parts);
  const [starts, total] = await Promise.all([
    sql<{ ids: string[] | null }>`
      SELECT array_agg(id ORDER BY id) AS ids FROM (
        SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM (${directoryPageIds(caller, page, pageSize)}) p
      ) numbered WHERE n % ${partSize} = 0`.execute(db).then((r) => r.rows[0]?.ids ?? []),
    sql<{ n: string | number }>`SELECT (${count}) AS n`.execute(db).then((r) => Number(r.rows[0]?.n ?? 0)),
  ]);
  const read = await Promise.all(
    starts.map((from, i) => {
      const to = starts[i + 1];
      const ids = sql`SELECT dpl.provider_location_id AS id, dpl.added_at FROM developer_provider_locations dpl
        WHERE ${mine(caller)} AND dpl.provider_location_id >= ${from} ${to === undefined ? sql`` : sql`AND dpl.provider_location_id < ${to}`}
        ORDER BY dpl.provider_location_id LIMIT ${Math.min(partSize, pageSize - i * partSize)}`;
      return entityPage(db, caller, ids, undefined);
    }),
  );
  return { rows: read.flatMap((r) => r.rows), total };
}

/**
 * The number of active provider-locations in the caller's directory: its row of
 * `developer_directory_sizes` (kept by triggers, migration 0021), read by primary key instead of
 * counting the whole directory on every page (docs/performance.md, "Directory reads (issue #20 §7)").
 */
function directorySize(caller: DirectoryCaller): RawBuilder<unknown> {
  return sql`SELECT coalesce((SELECT s.active_count FROM developer_directory_sizes s
    WHERE s.env = ${caller.env} AND s.developer_id = ${caller.developerId}), 0)`;
}

/** The caller's active directory (`developer_provider_locations_active`). */
function mine(caller: DirectoryCaller): RawBuilder<unknown> {
  return sql`dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId} AND dpl.active`;
}

/** The `(id, added_at)` of one page of the caller's active directory, in id order. */
function directoryPageIds(caller: DirectoryCaller, page: number, pageSize: number): RawBuilder<unknown> {
  return sql`SELECT dpl.provider_location_id AS id, dpl.added_at FROM developer_provider_locations dpl WHERE ${mine(caller)}
    ORDER BY dpl.provider_location_id LIMIT ${pageSize} OFFSET ${page * pageSize}`;
}

/** Up to this many changes in the window, `recentPage` reads the window; past it, the directory. */
const RECENT_WINDOW_READ_MAX = 5000;

/**
 * One page of the caller's active entities that went live (activated or added to the directory) or
 * had a profile update since `since`, and their number.
 *
 * A directory in service changes little in 72 hours, so normally only the window is read: every
 * change of a provider-location's `go_live_at` or `profile_updated_at` is written with a
 * `directory_changes` row (`writeDirectory`), so the candidates are the environment's changes since
 * then (`directory_changes_recent`) and the caller's additions since then
 * (`developer_provider_locations_recent`), each checked against the
 * timestamps themselves. Right after a large import the window holds most of the directory, and
 * de-duplicating it costs more than walking the directory: a bounded probe of the window picks one or
 * the other (same rows either way).
 */
async function recentPage(
  db: Db,
  caller: DirectoryCaller,
  page: number,
  pageSize: number,
  since: Date,
  windowReadMax: number,
): Promise<{ rows: EntityRow[]; total: number }> {
  const probe = await sql<{ n: string | number }>`
    SELECT (SELECT count(*) FROM (SELECT 1 FROM directory_changes dc
              WHERE dc.env = ${caller.env} AND dc.changed_at >= ${since} LIMIT ${windowReadMax}) c)
         + (SELECT count(*) FROM (SELECT 1 FROM developer_provider_locations dpl
              WHERE dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId} AND dpl.added_at >= ${since}
              LIMIT ${windowReadMax}) a) AS n`.execute(db);
  const readWindow = Number(probe.rows[0]?.n ?? 0) < windowReadMax;
  const recent = sql`(greatest(pl.go_live_at, dpl.added_at) >= ${since} OR pl.profile_updated_at >= ${since})`;
  const hits = readWindow
    ? sql`
      SELECT dpl.provider_location_id AS id, dpl.added_at
      FROM (
        SELECT dc.provider_location_id AS id FROM directory_changes dc WHERE dc.env = ${caller.env} AND dc.changed_at >= ${since}
        UNION
        SELECT dpl.provider_location_id FROM developer_provider_locations dpl
        WHERE dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId} AND dpl.added_at >= ${since}
      ) ids
      JOIN developer_provider_locations dpl
        ON dpl.developer_id = ${caller.developerId} AND dpl.provider_location_id = ids.id AND dpl.env = ${caller.env}
      JOIN provider_locations pl ON pl.env = ${caller.env} AND pl.id = ids.id AND pl.active
      WHERE ${recent}`
    : sql`
      SELECT dpl.provider_location_id AS id, dpl.added_at
      FROM developer_provider_locations dpl
      JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id AND pl.active
      WHERE dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId} AND dpl.active AND ${recent}`;
  return entityPage(
    db,
    caller,
    sql`SELECT h.*, count(*) OVER () AS total FROM (${hits}) h ORDER BY h.id LIMIT ${pageSize} OFFSET ${page * pageSize}`,
    sql`SELECT count(*) FROM (${hits}) h`,
    true,
  );
}

/**
 * One page of entities (ordered by id) and the total count. With `cache`, availability summaries
 * computed less than its TTL ago are reused, from the memo or the stored rows (see
 * src/domain/availability/directory-availability.ts).
 *
 * A page of the directory that was not served within the memo's lifetime has its stored summaries
 * read alongside the page itself (two statements at once): a cold page of 10,000 then costs about
 * what a warm one does, instead of the page query followed by the summaries' (measured ~50 ms less
 * at 10,000; docs/directory-format.md, "Performance notes").
 */
export async function listSchedulableEntities(
  db: Db,
  caller: DirectoryCaller,
  q: {
    page: number;
    pageSize: number;
    recentOnly: boolean;
    publicBaseUrl: string;
    now?: Date;
    cache?: AvailabilityCache;
    /** `recentOnly`: the window size past which the directory is walked instead (tests set it to exercise both). */
    recentWindowReadMax?: number;
    /** The largest part a page is read in (default `PAGE_PART_SIZE`; tests set it to exercise parts on small pages). */
    maxPart?: number;
  },
): Promise<{ total: number; entities: SchedulableEntity[] }> {
  const now = q.now ?? new Date();
  const since = new Date(now.getTime() - RECENT_WINDOW_MS);
  // Weekly schedules are not read here: `directoryAvailability` loads them for the summaries it
  // has to compute (none when they are all cached).
  const cache = q.cache;
  const pageKey = `${caller.env}|${caller.developerId}|${q.page}|${q.pageSize}`;
  const prefetch = cache && !q.recentOnly && !cache.pageMemoised(pageKey, now.getTime());
  const [{ rows, total }, stored] = await Promise.all([
    q.recentOnly
      ? recentPage(db, caller, q.page, q.pageSize, since, q.recentWindowReadMax ?? RECENT_WINDOW_READ_MAX)
      : directoryPage(db, caller, q.page, q.pageSize, q.maxPart),
    prefetch
      ? readStoredSummaries(db, caller.env, directoryPageIds(caller, q.page, q.pageSize), { nowMs: now.getTime(), maxAgeMs: cache.ttlMs, activeOnly: false })
      : undefined,
  ]);
  // By id: a summary the memo and the stored rows lack (rare with the refresher running) is computed
  // from the provider-location read there, so the page itself carries only what the entity shows.
  const availability = await directoryAvailability(db, {
    env: caller.env,
    providerLocationIds: rows.map((r) => r.id),
    now,
    ...(cache ? { cache } : {}),
    ...(stored ? { stored } : {}),
  });
  if (cache && !q.recentOnly) cache.notePage(pageKey, caller.env, availability.keys());
  const iso = isoMemo();
  const entities = new Array<SchedulableEntity>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const a = availability.get(r.id);
    const url = availabilityUrlPrefix(q.publicBaseUrl, r.id, r.reason ?? undefined);
    // One shape for every entity (optional fields assigned after), in the order of the schema.
    const e: SchedulableEntity = {
      id: r.id,
      npi: r.npi,
      type: 'provider_location',
      go_live_timestamp_utc: iso(r.go_live),
      profile_last_modified_timestamp_utc: iso(r.profile_updated_at),
      new_patient_availability: withUrl(a?.new, `${url}new`),
      existing_patient_availability: withUrl(a?.existing, `${url}existing`),
      time_zone: r.time_zone,
    };
    if (r.main_specialty_id) {
      e.main_specialty_id = r.main_specialty_id;
      if (r.main_specialty_name) e.main_specialty_name = r.main_specialty_name;
    }
    entities[i] = e;
  }
  return { total, entities };
}
