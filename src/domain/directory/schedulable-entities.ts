/**
 * Schedulable entities (interface.md §2.4, §4.8): the caller's active provider-locations with their
 * availability summaries, and the 72-hour change summary of the caller's directory.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { AvailabilityCache } from './availability-cache.js';
import { directoryAvailability, type PatientTypeAvailability } from './availability-summary.js';
import type { DirectoryCaller } from './visible.js';

export const SCHEDULE_TYPES = ['provider_location'] as const;
export const RECENT_WINDOW_MS = 72 * 3600 * 1000;

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

export interface RecentChangeSummary {
  schedulable_entities_added: string[];
  schedulable_entities_removed: string[];
  schedulable_entities_profile_updated: string[];
}

/** Availability URL for a provider-location, visit reason and patient type (contracts.md §4 availability). */
export function availabilityUrl(publicBaseUrl: string, plId: string, visitReasonId: string | undefined, patientType: 'new' | 'existing'): string {
  return `${availabilityUrlPrefix(publicBaseUrl, plId, visitReasonId)}${patientType}`;
}

/** `application/x-www-form-urlencoded` encoding of a value, exactly as `URLSearchParams` writes it. */
function formEncode(v: string): string {
  const e = encodeURIComponent(v);
  return /[!'()~]|%20/.test(e) ? e.replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%20/g, '+') : e;
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

/**
 * One page of entities (ordered by id) and the total count. With `cache`, availability summaries
 * computed less than its TTL ago are reused (see `availability-cache.ts`).
 */
export async function listSchedulableEntities(
  db: Db,
  caller: DirectoryCaller,
  q: { page: number; pageSize: number; recentOnly: boolean; publicBaseUrl: string; now?: Date; cache?: AvailabilityCache },
): Promise<{ total: number; entities: SchedulableEntity[] }> {
  const now = q.now ?? new Date();
  const since = new Date(now.getTime() - RECENT_WINDOW_MS);
  const recent = q.recentOnly
    ? sql`AND (greatest(pl.go_live_at, dpl.added_at) >= ${since} OR pl.profile_updated_at >= ${since})`
    : sql``;
  // Weekly schedules are not read here: `directoryAvailability` loads them for the summaries it
  // has to compute (none when they are all cached).
  const { rows } = await sql<{
    id: string;
    npi: string;
    go_live: Date;
    profile_updated_at: Date;
    time_zone: string;
    main_specialty_id: string | null;
    main_specialty_name: string | null;
    default_visit_reason_id: string | null;
    visit_reason_ids: string[];
    provider_id: string;
    location_id: string;
    total: string | number;
  }>`
    WITH page AS MATERIALIZED (
      -- The provider-location's own columns come along from the directory walk (no second join).
      SELECT pl.id, pl.provider_id, pl.location_id, greatest(pl.go_live_at, dpl.added_at) AS go_live, pl.profile_updated_at,
             count(*) OVER () AS total
      FROM developer_provider_locations dpl
      JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id AND pl.active
      WHERE dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId} ${recent}
      ORDER BY dpl.provider_location_id
      LIMIT ${q.pageSize} OFFSET ${q.page * q.pageSize}
    )
    SELECT page.id, p.npi, page.go_live, page.profile_updated_at, l.time_zone,
           p.main_specialty_id, s.name AS main_specialty_name, p.default_visit_reason_id, p.visit_reason_ids,
           page.provider_id, page.location_id, page.total
    FROM page
    JOIN providers p ON p.env = ${caller.env} AND p.id = page.provider_id
    JOIN locations l ON l.env = ${caller.env} AND l.id = page.location_id
    LEFT JOIN specialties s ON s.env = p.env AND s.id = p.main_specialty_id
    ORDER BY page.id`.execute(db);
  let total = rows.length ? Number(rows[0]!.total) : 0;
  if (rows.length === 0 && q.page > 0) {
    const c = await sql<{ n: string | number }>`
      SELECT count(*) AS n FROM developer_provider_locations dpl
      JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id AND pl.active
      WHERE dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId} ${recent}`.execute(db);
    total = Number(c.rows[0]?.n ?? 0);
  }
  const availability = await directoryAvailability(db, { env: caller.env, rows, now, ...(q.cache ? { cache: q.cache } : {}) });
  const entities = rows.map((r): SchedulableEntity => {
    const a = availability.get(r.id);
    const reason = r.default_visit_reason_id ?? r.visit_reason_ids[0] ?? undefined;
    const url = availabilityUrlPrefix(q.publicBaseUrl, r.id, reason);
    return {
      id: r.id,
      npi: r.npi,
      type: 'provider_location',
      go_live_timestamp_utc: new Date(r.go_live).toISOString(),
      profile_last_modified_timestamp_utc: new Date(r.profile_updated_at).toISOString(),
      new_patient_availability: withUrl(a?.new, `${url}new`),
      existing_patient_availability: withUrl(a?.existing, `${url}existing`),
      time_zone: r.time_zone,
      ...(r.main_specialty_id ? { main_specialty_id: r.main_specialty_id } : {}),
      ...(r.main_specialty_id && r.main_specialty_name ? { main_specialty_name: r.main_specialty_name } : {}),
    };
  });
  return { total, entities };
}

/**
 * The 72-hour change summary of the caller's directory (interface.md §2.4): added (activated, or
 * added to the directory) and still active; removed (deactivated) and still inactive; profile
 * updated and active, not already listed as added.
 */
export async function recentChangeSummary(db: Db, caller: DirectoryCaller, now: Date = new Date()): Promise<RecentChangeSummary> {
  const since = new Date(now.getTime() - RECENT_WINDOW_MS);
  // Only what changed in the window is read: the environment's recent changes (directory_changes_recent)
  // and the caller's recent additions (developer_provider_locations_recent, migration 0007), so a
  // directory with no recent change costs two empty index range scans whatever its size.
  const { rows } = await sql<{ id: string; active: boolean; added: boolean; removed: boolean; updated: boolean }>`
    WITH changed AS (
      SELECT dc.provider_location_id AS id,
        bool_or(dc.change = 'added') AS added, bool_or(dc.change = 'removed') AS removed,
        bool_or(dc.change = 'profile_updated') AS updated
      FROM directory_changes dc
      WHERE dc.env = ${caller.env} AND dc.changed_at >= ${since}
      GROUP BY dc.provider_location_id
    ),
    joined AS (
      SELECT dpl.provider_location_id AS id FROM developer_provider_locations dpl
      WHERE dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId} AND dpl.added_at >= ${since}
    ),
    ids AS (SELECT id FROM changed UNION SELECT id FROM joined)
    SELECT pl.id, pl.active,
      (j.id IS NOT NULL OR coalesce(c.added, false)) AS added,
      coalesce(c.removed, false) AS removed,
      coalesce(c.updated, false) AS updated
    FROM ids
    JOIN developer_provider_locations dpl
      ON dpl.developer_id = ${caller.developerId} AND dpl.provider_location_id = ids.id AND dpl.env = ${caller.env}
    JOIN provider_locations pl ON pl.env = ${caller.env} AND pl.id = ids.id
    LEFT JOIN changed c ON c.id = ids.id
    LEFT JOIN joined j ON j.id = ids.id
    ORDER BY pl.id`.execute(db);
  const out: RecentChangeSummary = { schedulable_entities_added: [], schedulable_entities_removed: [], schedulable_entities_profile_updated: [] };
  for (const r of rows) {
    if (r.active && r.added) out.schedulable_entities_added.push(r.id);
    else if (!r.active && r.removed) out.schedulable_entities_removed.push(r.id);
    else if (r.active && r.updated) out.schedulable_entities_profile_updated.push(r.id);
  }
  return out;
}
