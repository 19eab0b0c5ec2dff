/**
 * Facilities (beta; docs/api/directory.md#facilities-beta `GET /v1-beta/facilities`): clinics and hospitals whose schedule
 * is a provider-location in the caller's directory, found by NPI or by ZIP and distance.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.js';
import { boundingBox, distanceMiSql, type ZipCentroid } from './geo.js';
import { loadProviderLocationViews, type InPersonLocationView, type VirtualLocationView } from './provider-location-view.js';
import type { DirectoryCaller } from './visible.js';
import type { KeptReference } from './kept-reference.js';

export interface Facility {
  facility_id: string;
  name: string;
  npi?: string;
  building_type: 'clinic' | 'hospital';
  specialties: string[];
  languages: string[];
  visit_reason_ids: string[];
  default_visit_reason_id?: string;
  location: InPersonLocationView | VirtualLocationView;
  schedule: {
    schedule_id: string;
    provider_location_id: string;
    booking_requirements: { required_fields: string[]; accepts_booking_requests_from: string[] };
  };
  practice: { practice_id: string; practice_name: string };
}

export interface FacilitySearch {
  npis?: string[] | undefined;
  origin?: ZipCentroid | undefined;
  maxDistanceMi: number;
  buildingType?: 'clinic' | 'hospital' | undefined;
  visitReasonId?: string | undefined;
  insurancePlanId?: string | undefined;
  page: number;
  pageSize: number;
}

/**
 * The facilities `f` of the caller's directory: a facility is in it when its provider-location is an
 * active one of the caller's directory, one index-only probe of `developer_provider_locations_active`
 * (its `active` copies the provider-location's, migration 0008) per facility. With `withProvider`,
 * its provider and practice too, as `v` (by primary key). Both are LATERAL … LIMIT 1 lookups, so
 * that the candidates come from the facilities' own indexes (`facilities_geo`, the primary key) and a
 * page never joins whole tables, whatever the planner estimates (it hashed the developer's whole
 * directory for 20 facilities of a few thousand, measured).
 */
function facilitiesOf(caller: DirectoryCaller, withProvider: boolean): RawBuilder<unknown> {
  return sql`
  FROM facilities f
  CROSS JOIN LATERAL (
    SELECT 1 FROM developer_provider_locations dpl
    WHERE dpl.env = f.env AND dpl.developer_id = ${caller.developerId} AND dpl.provider_location_id = f.provider_location_id AND dpl.active
    LIMIT 1
  ) mine
  ${withProvider
    ? sql`CROSS JOIN LATERAL (
    SELECT p.npi AS provider_npi, p.visit_reason_ids, pt.id AS practice_id, pt.insurance_managed_at_practice
    FROM provider_locations pl
    JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    JOIN practices pt ON pt.env = p.env AND pt.id = p.practice_id
    WHERE pl.env = f.env AND pl.id = f.provider_location_id
    LIMIT 1
  ) v`
    : sql``}`;
}

/** One page of facilities (nearest first with a ZIP, else by id) and the total. */
export async function searchFacilities(db: Db, caller: DirectoryCaller, q: FacilitySearch, publicBaseUrl: string, keep?: KeptReference): Promise<{ total: number; items: Facility[] }> {
  const where: RawBuilder<unknown>[] = [sql`f.env = ${caller.env}`];
  let distance: RawBuilder<unknown> = sql`NULL::float8`;
  if (q.npis?.length) where.push(sql`coalesce(f.npi, v.provider_npi) = ANY(${q.npis}::text[])`);
  if (q.origin) {
    // The facility's own copy of its location's coordinates (null when virtual; migration 0021): the
    // candidates are the facilities in the box (`facilities_geo`), not every location in it.
    const box = boundingBox(q.origin.latitude, q.origin.longitude, q.maxDistanceMi);
    distance = distanceMiSql('f.latitude', 'f.longitude', q.origin.latitude, q.origin.longitude);
    where.push(sql`f.latitude BETWEEN ${box.minLat}::float8 AND ${box.maxLat}::float8
      AND f.longitude BETWEEN ${box.minLon}::float8 AND ${box.maxLon}::float8`);
  }
  if (q.buildingType) where.push(sql`f.building_type = ${q.buildingType}`);
  if (q.visitReasonId) where.push(sql`${q.visitReasonId}::text = ANY(v.visit_reason_ids)`);
  if (q.insurancePlanId) {
    where.push(sql`CASE WHEN v.insurance_managed_at_practice
      THEN EXISTS (SELECT 1 FROM practice_insurance_plans pip WHERE pip.env = f.env AND pip.practice_id = v.practice_id AND pip.insurance_plan_id = ${q.insurancePlanId}::text)
      ELSE EXISTS (SELECT 1 FROM provider_location_insurance_plans plip WHERE plip.env = f.env AND plip.provider_location_id = f.provider_location_id AND plip.insurance_plan_id = ${q.insurancePlanId}::text)
      END`);
  }
  const withProvider = Boolean(q.npis?.length || q.visitReasonId || q.insurancePlanId);
  const inner = sql`SELECT f.id, f.name, f.npi, f.building_type, f.provider_location_id, ${distance} AS distance ${facilitiesOf(caller, withProvider)} WHERE ${sql.join(where, sql` AND `)}`;
  const within = q.origin ? sql`WHERE distance <= ${q.maxDistanceMi}::float8` : sql``;
  const { rows } = await sql<FacilityRow & { distance: number | null; total: string | number }>`
    SELECT id, name, npi, building_type, provider_location_id, distance, count(*) OVER () AS total FROM (${inner}) x ${within}
    ORDER BY distance ASC NULLS LAST, id LIMIT ${q.pageSize} OFFSET ${q.page * q.pageSize}`.execute(db);
  let total = rows.length ? Number(rows[0]!.total) : 0;
  if (!rows.length && q.page > 0) {
    const c = await sql<{ n: string | number }>`SELECT count(*) AS n FROM (${inner}) x ${within}`.execute(db);
    total = Number(c.rows[0]?.n ?? 0);
  }
  const distances = new Map(rows.filter((r) => r.distance !== null).map((r) => [r.provider_location_id, Number(r.distance)]));
  return { total, items: await facilitiesOfRows(db, caller, rows, publicBaseUrl, keep, distances) };
}

/** Facilities by id, in the given order, restricted to the caller's directory. */
export async function facilitiesById(db: Db, caller: DirectoryCaller, ids: string[], publicBaseUrl: string, keep?: KeptReference): Promise<Facility[]> {
  if (!ids.length) return [];
  const { rows } = await sql<FacilityRow>`
    SELECT f.id, f.name, f.npi, f.building_type, f.provider_location_id ${facilitiesOf(caller, false)}
    WHERE f.env = ${caller.env} AND f.id = ANY(${ids}::text[])`.execute(db);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return facilitiesOfRows(db, caller, ids.map((id) => byId.get(id)).filter((r) => r !== undefined), publicBaseUrl, keep);
}

interface FacilityRow {
  id: string;
  name: string;
  npi: string | null;
  building_type: 'clinic' | 'hospital';
  provider_location_id: string;
}

/** The facilities of `rows` (already read from the caller's directory), in their order, with their provider-locations' views. */
async function facilitiesOfRows(db: Db, caller: DirectoryCaller, rows: FacilityRow[], publicBaseUrl: string, keep: KeptReference | undefined, distances?: Map<string, number>): Promise<Facility[]> {
  if (!rows.length) return [];
  const views = await loadProviderLocationViews(db, caller, {
    ids: rows.map((r) => r.provider_location_id),
    publicBaseUrl,
    ...(distances ? { distances } : {}),
    // A facility shows no availability: none is computed.
    availability: false,
    keep,
  });
  const out: Facility[] = [];
  for (const f of rows) {
    const v = views.get(f.provider_location_id);
    if (!v) continue;
    out.push({
      facility_id: f.id,
      name: f.name,
      ...(f.npi ?? v.provider.npi ? { npi: f.npi ?? v.provider.npi } : {}),
      building_type: f.building_type,
      specialties: v.provider.specialties,
      languages: v.provider.languages,
      visit_reason_ids: v.provider.visit_reason_ids,
      ...(v.provider.default_visit_reason_id ? { default_visit_reason_id: v.provider.default_visit_reason_id } : {}),
      location: (v.location ?? v.virtual_location)!,
      schedule: { schedule_id: v.provider_location_id, provider_location_id: v.provider_location_id, booking_requirements: v.booking_requirements },
      practice: v.practice,
    });
  }
  return out;
}
