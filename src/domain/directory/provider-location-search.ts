/**
 * Provider-location search (docs/api/directory.md#provider-location-search `GET /v1/provider_locations`, docs/api/README.md#operations): by
 * the patient's ZIP and distance, a specialty or visit reason, accepted insurance and visit type,
 * nearest first, in the caller's directory. Candidates are the search rows of one term
 * (`provider_location_search`, migration 0008, kept by `writeDirectory`): in-person ones by a
 * latitude/longitude box on `provider_location_search_in_person`, then an exact great-circle
 * distance; virtual ones in the patient's state (`provider_location_search_virtual`), sorted after
 * in-person ones. So the work follows the number of matching provider-locations near the patient,
 * not the size of the directory.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.js';
import { invalidInput } from '../errors.js';
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
  if (!q.specialtyId && !q.visitReasonId) throw invalidInput('specialty_id', 'specialty_id or visit_reason_id is required');
  const { latitude: lat, longitude: lon, state } = q.origin;
  const box = boundingBox(lat, lon, q.maxDistanceMi);
  // Candidates come from one term's rows (a visit reason is the narrower one); the other term, when
  // both are given, is a primary-key probe per candidate.
  const term = q.visitReasonId ? `vr:${q.visitReasonId}` : `sp:${q.specialtyId}`;
  const filters: RawBuilder<unknown>[] = [];
  if (q.visitReasonId && q.specialtyId) {
    filters.push(sql`EXISTS (SELECT 1 FROM provider_location_search s2
      WHERE s2.env = s.env AND s2.provider_location_id = s.provider_location_id AND s2.term = ${`sp:${q.specialtyId}`}::text)`);
  }
  if (q.visitReasonId) {
    // A practice may stop offering a visit reason at one provider-location (docs/decisions/0019-practice-visit-reasons.md):
    // a primary-key probe of its overrides per candidate.
    filters.push(sql`NOT EXISTS (SELECT 1 FROM provider_location_visit_reasons o
      WHERE o.env = s.env AND o.provider_location_id = s.provider_location_id AND o.visit_reason_id = ${q.visitReasonId}::text AND NOT o.offered)`);
  }
  if (q.insurancePlanId) {
    // Only the candidates that passed every other filter reach the provider-location and its practice.
    filters.push(sql`EXISTS (SELECT 1 FROM provider_locations pl
      JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
      JOIN practices pt ON pt.env = p.env AND pt.id = p.practice_id
      WHERE pl.env = s.env AND pl.id = s.provider_location_id
        AND CASE WHEN pt.insurance_managed_at_practice
          THEN EXISTS (SELECT 1 FROM practice_insurance_plans pip
                       WHERE pip.env = pt.env AND pip.practice_id = pt.id AND pip.insurance_plan_id = ${q.insurancePlanId}::text)
          ELSE EXISTS (SELECT 1 FROM provider_location_insurance_plans plip
                       WHERE plip.env = pl.env AND plip.provider_location_id = pl.id AND plip.insurance_plan_id = ${q.insurancePlanId}::text)
          END)`);
  }
  const extra = filters.length ? sql`AND ${sql.join(filters, sql` AND `)}` : sql``;
  // Search rows exist only for active provider-locations; the caller's directory is an index-only
  // probe of `developer_provider_locations_active`.
  const base = sql`
    FROM provider_location_search s
    JOIN developer_provider_locations dpl
      ON dpl.env = s.env AND dpl.developer_id = ${caller.developerId} AND dpl.provider_location_id = s.provider_location_id AND dpl.active`;

  const parts: RawBuilder<unknown>[] = [];
  if (q.visitType !== 'video_visit') {
    parts.push(sql`
      SELECT s.provider_location_id AS id, ${distanceMiSql('s.latitude', 's.longitude', lat, lon)} AS distance
      ${base}
      WHERE s.env = ${caller.env} AND s.term = ${term}::text AND NOT s.is_virtual
        AND s.latitude BETWEEN ${box.minLat}::float8 AND ${box.maxLat}::float8
        AND s.longitude BETWEEN ${box.minLon}::float8 AND ${box.maxLon}::float8
        ${extra}`);
  }
  if (q.visitType !== 'in_person') {
    parts.push(sql`
      SELECT s.provider_location_id AS id, NULL::float8 AS distance
      ${base}
      WHERE s.env = ${caller.env} AND s.term = ${term}::text AND s.is_virtual AND s.state = ${state}::text
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
