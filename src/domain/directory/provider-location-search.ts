/**
 * Provider-location search (contracts.md §4 `GET /v1/provider_locations`, interface.md §4.16): by
 * the patient's ZIP and distance, a specialty or visit reason, accepted insurance and visit type,
 * nearest first, in the caller's directory. In-person candidates come from a latitude/longitude box
 * on the `locations_geo` index, then an exact great-circle distance; virtual provider-locations
 * qualify in the patient's state and sort after in-person ones.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.js';
import { boundingBox, distanceMiSql, type ZipCentroid } from './geo.js';
import type { DirectoryCaller } from './visible.js';

export type SearchVisitType = 'all' | 'in_person' | 'video_visit';

export interface ProviderLocationSearch {
  origin: ZipCentroid;
  specialtyId?: string | undefined;
  visitReasonId?: string | undefined;
  insurancePlanId?: string | undefined;
  visitType: SearchVisitType;
  maxDistanceMi: number;
  page: number;
  pageSize: number;
}

export interface SearchHit {
  id: string;
  /** Miles from the ZIP centroid; null for virtual provider-locations. */
  distance: number | null;
}

/** One page of hits, nearest first (ties by id), and the total number of hits. */
export async function searchProviderLocations(
  db: Db,
  caller: DirectoryCaller,
  q: ProviderLocationSearch,
): Promise<{ total: number; hits: SearchHit[] }> {
  const { latitude: lat, longitude: lon, state } = q.origin;
  const box = boundingBox(lat, lon, q.maxDistanceMi);
  const filters: RawBuilder<unknown>[] = [];
  if (q.specialtyId) filters.push(sql`${q.specialtyId}::text = ANY(p.specialty_ids)`);
  if (q.visitReasonId) filters.push(sql`${q.visitReasonId}::text = ANY(p.visit_reason_ids)`);
  if (q.insurancePlanId) {
    filters.push(sql`CASE WHEN pt.insurance_managed_at_practice
      THEN EXISTS (SELECT 1 FROM practice_insurance_plans pip
                   WHERE pip.env = pt.env AND pip.practice_id = pt.id AND pip.insurance_plan_id = ${q.insurancePlanId}::text)
      ELSE EXISTS (SELECT 1 FROM provider_location_insurance_plans plip
                   WHERE plip.env = pl.env AND plip.provider_location_id = pl.id AND plip.insurance_plan_id = ${q.insurancePlanId}::text)
      END`);
  }
  const extra = filters.length ? sql`AND ${sql.join(filters, sql` AND `)}` : sql``;
  const base = sql`
    FROM locations l
    JOIN provider_locations pl ON pl.env = l.env AND pl.location_id = l.id AND pl.active
    JOIN developer_provider_locations dpl
      ON dpl.developer_id = ${caller.developerId} AND dpl.provider_location_id = pl.id AND dpl.env = pl.env
    JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    JOIN practices pt ON pt.env = p.env AND pt.id = p.practice_id`;

  const parts: RawBuilder<unknown>[] = [];
  if (q.visitType !== 'video_visit') {
    parts.push(sql`
      SELECT pl.id, ${distanceMiSql('l.latitude', 'l.longitude', lat, lon)} AS distance
      ${base}
      WHERE l.env = ${caller.env} AND NOT l.is_virtual AND pl.provider_location_type = 'in_person_provider'
        AND l.latitude BETWEEN ${box.minLat}::float8 AND ${box.maxLat}::float8
        AND l.longitude BETWEEN ${box.minLon}::float8 AND ${box.maxLon}::float8
        ${extra}`);
  }
  if (q.visitType !== 'in_person') {
    parts.push(sql`
      SELECT pl.id, NULL::float8 AS distance
      ${base}
      WHERE l.env = ${caller.env} AND l.state = ${state}
        AND (l.is_virtual OR pl.provider_location_type = 'virtual_provider')
        ${extra}`);
  }
  const { rows } = await sql<{ id: string; distance: number | null; total: string | number }>`
    SELECT id, distance, count(*) OVER () AS total
    FROM (${sql.join(parts, sql` UNION ALL `)}) hits
    WHERE distance IS NULL OR distance <= ${q.maxDistanceMi}::float8
    ORDER BY distance ASC NULLS LAST, id
    LIMIT ${q.pageSize} OFFSET ${q.page * q.pageSize}`.execute(db);
  let total = rows.length ? Number(rows[0]!.total) : 0;
  if (rows.length === 0 && q.page > 0) {
    // Past the last page: the window count is unavailable, so count separately.
    const c = await sql<{ n: string | number }>`
      SELECT count(*) AS n FROM (${sql.join(parts, sql` UNION ALL `)}) hits
      WHERE distance IS NULL OR distance <= ${q.maxDistanceMi}::float8`.execute(db);
    total = Number(c.rows[0]?.n ?? 0);
  }
  return { total, hits: rows.map((r) => ({ id: r.id, distance: r.distance === null ? null : Number(r.distance) })) };
}
