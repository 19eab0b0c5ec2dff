/**
 * Schedulable entities (interface.md §2.4, §4.8): the caller's active provider-locations with their
 * availability summaries, and the 72-hour change summary of the caller's directory.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { weeklyBlocksAggSql } from '../scheduling/schedule-data.js';
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
  const q = new URLSearchParams({ provider_location_ids: plId });
  if (visitReasonId) q.set('visit_reason_id', visitReasonId);
  q.set('patient_type', patientType);
  return `${publicBaseUrl}/v1/provider_locations/availability?${q.toString()}`;
}

/** One page of entities (ordered by id) and the total count. */
export async function listSchedulableEntities(
  db: Db,
  caller: DirectoryCaller,
  q: { page: number; pageSize: number; recentOnly: boolean; publicBaseUrl: string; now?: Date },
): Promise<{ total: number; entities: SchedulableEntity[] }> {
  const now = q.now ?? new Date();
  const since = new Date(now.getTime() - RECENT_WINDOW_MS);
  const recent = q.recentOnly
    ? sql`AND (greatest(pl.go_live_at, dpl.added_at) >= ${since} OR pl.profile_updated_at >= ${since})`
    : sql``;
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
    blocks: string | null;
    total: string | number;
  }>`
    WITH page AS MATERIALIZED (
      SELECT dpl.provider_location_id AS id, dpl.added_at, count(*) OVER () AS total
      FROM developer_provider_locations dpl
      JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id AND pl.active
      WHERE dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId} ${recent}
      ORDER BY dpl.provider_location_id
      LIMIT ${q.pageSize} OFFSET ${q.page * q.pageSize}
    ),
    -- The page's weekly schedules, aggregated with one join (a correlated subquery per row makes
    -- the planner's estimate large enough to switch JIT compilation on, which costs more than it saves).
    blocks AS (
      SELECT ws.provider_location_id AS id, ${weeklyBlocksAggSql()} AS blocks
      FROM page JOIN weekly_schedules ws ON ws.env = ${caller.env} AND ws.provider_location_id = page.id
      GROUP BY ws.provider_location_id
    )
    SELECT pl.id, p.npi, greatest(pl.go_live_at, page.added_at) AS go_live, pl.profile_updated_at, l.time_zone,
           p.main_specialty_id, s.name AS main_specialty_name, p.default_visit_reason_id, p.visit_reason_ids,
           pl.provider_id, pl.location_id, blocks.blocks, page.total
    FROM page
    JOIN provider_locations pl ON pl.env = ${caller.env} AND pl.id = page.id
    JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
    LEFT JOIN specialties s ON s.env = p.env AND s.id = p.main_specialty_id
    LEFT JOIN blocks ON blocks.id = page.id
    ORDER BY page.id`.execute(db);
  let total = rows.length ? Number(rows[0]!.total) : 0;
  if (rows.length === 0 && q.page > 0) {
    const c = await sql<{ n: string | number }>`
      SELECT count(*) AS n FROM developer_provider_locations dpl
      JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id AND pl.active
      WHERE dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId} ${recent}`.execute(db);
    total = Number(c.rows[0]?.n ?? 0);
  }
  const availability = await directoryAvailability(db, { env: caller.env, rows, now });
  const entities = rows.map((r): SchedulableEntity => {
    const a = availability.get(r.id);
    const reason = r.default_visit_reason_id ?? r.visit_reason_ids[0] ?? undefined;
    return {
      id: r.id,
      npi: r.npi,
      type: 'provider_location',
      go_live_timestamp_utc: new Date(r.go_live).toISOString(),
      profile_last_modified_timestamp_utc: new Date(r.profile_updated_at).toISOString(),
      new_patient_availability: { ...(a?.new ?? { next_28_days: 'none' }), url: availabilityUrl(q.publicBaseUrl, r.id, reason, 'new') },
      existing_patient_availability: {
        ...(a?.existing ?? { next_28_days: 'none' }),
        url: availabilityUrl(q.publicBaseUrl, r.id, reason, 'existing'),
      },
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
  const { rows } = await sql<{ id: string; active: boolean; added: boolean; removed: boolean; updated: boolean }>`
    SELECT pl.id, pl.active,
      (dpl.added_at >= ${since} OR bool_or(dc.change = 'added')) AS added,
      coalesce(bool_or(dc.change = 'removed'), false) AS removed,
      coalesce(bool_or(dc.change = 'profile_updated'), false) AS updated
    FROM developer_provider_locations dpl
    JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id
    LEFT JOIN directory_changes dc ON dc.env = dpl.env AND dc.provider_location_id = dpl.provider_location_id AND dc.changed_at >= ${since}
    WHERE dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId}
      AND (dpl.added_at >= ${since} OR dc.id IS NOT NULL)
    GROUP BY pl.id, pl.active, dpl.added_at
    ORDER BY pl.id`.execute(db);
  const out: RecentChangeSummary = { schedulable_entities_added: [], schedulable_entities_removed: [], schedulable_entities_profile_updated: [] };
  for (const r of rows) {
    if (r.active && r.added) out.schedulable_entities_added.push(r.id);
    else if (!r.active && r.removed) out.schedulable_entities_removed.push(r.id);
    else if (r.active && r.updated) out.schedulable_entities_profile_updated.push(r.id);
  }
  return out;
}
