/**
 * Oracles for the directory's derived search data (migrations 0008 and 0021): the provider-location
 * search as it was before `provider_location_search` existed (a join of the base tables), and the
 * search rows, `developer_provider_locations.active` values, directory sizes and facility
 * coordinates recomputed from the base tables.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../src/db/database.js';
import { boundingBox, distanceMiSql } from '../../src/domain/directory/geo.js';
import type { ProviderLocationSearch, SearchHit } from '../../src/domain/directory/provider-location-search.js';
import type { DirectoryCaller } from '../../src/domain/directory/visible.js';

/** The search over the base tables, exactly as it was written before migration 0008 (the oracle). */
export async function oracleSearch(
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

/** One line per stored search row, sorted. */
export async function storedSearchRows(db: Db): Promise<string[]> {
  const { rows } = await sql<{ r: string }>`
    SELECT concat_ws('|', env, provider_location_id, term, is_virtual, state, latitude, longitude) AS r
    FROM provider_location_search`.execute(db);
  return rows.map((x) => x.r).sort();
}

/** The search rows the base tables call for, in the form of `storedSearchRows`. */
export async function expectedSearchRows(db: Db): Promise<string[]> {
  const { rows } = await sql<{ r: string }>`
    SELECT concat_ws('|', pl.env, pl.id, t.term, l.is_virtual OR pl.provider_location_type = 'virtual_provider', l.state, l.latitude, l.longitude) AS r
    FROM provider_locations pl
    JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
    CROSS JOIN LATERAL (
      SELECT DISTINCT x FROM (SELECT 'sp:' || s FROM unnest(p.specialty_ids) s UNION ALL SELECT 'vr:' || v FROM unnest(p.visit_reason_ids) v) u(x)
    ) t(term)
    WHERE pl.active`.execute(db);
  return rows.map((x) => x.r).sort();
}

/** Developer rows whose `active` differs from their provider-location's. */
export async function activeMismatches(db: Db): Promise<string[]> {
  const { rows } = await sql<{ r: string }>`
    SELECT dpl.developer_id || ' ' || dpl.provider_location_id AS r
    FROM developer_provider_locations dpl
    JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id
    WHERE dpl.active IS DISTINCT FROM pl.active`.execute(db);
  return rows.map((x) => x.r);
}

/** Developer rows whose NPI copy (migration 0027) differs from their provider-location's provider's NPI. */
export async function npiMismatches(db: Db): Promise<string[]> {
  const { rows } = await sql<{ r: string }>`
    SELECT dpl.developer_id || ' ' || dpl.provider_location_id AS r
    FROM developer_provider_locations dpl
    JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id
    JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    WHERE dpl.npi IS DISTINCT FROM p.npi`.execute(db);
  return rows.map((x) => x.r);
}

/**
 * Developers whose stored directory size (`developer_directory_sizes`, migration 0021) differs from a
 * count of their active rows: `developer counted stored`.
 */
export async function sizeMismatches(db: Db): Promise<string[]> {
  const { rows } = await sql<{ r: string }>`
    SELECT coalesce(c.developer_id, s.developer_id) || ' ' || coalesce(c.n, 0) || ' ' || coalesce(s.active_count, 0) AS r
    FROM (SELECT env, developer_id, count(*) FILTER (WHERE active) AS n FROM developer_provider_locations GROUP BY env, developer_id) c
    FULL JOIN developer_directory_sizes s ON s.env = c.env AND s.developer_id = c.developer_id
    WHERE coalesce(c.n, 0) <> coalesce(s.active_count, 0)`.execute(db);
  return rows.map((x) => x.r);
}

/** Facilities whose stored coordinates (migration 0021) are not their location's (none when it is virtual). */
export async function facilityCoordinateMismatches(db: Db): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT f.id FROM facilities f
    JOIN provider_locations pl ON pl.env = f.env AND pl.id = f.provider_location_id
    JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
    WHERE (f.latitude, f.longitude) IS DISTINCT FROM
          (CASE WHEN l.is_virtual THEN NULL ELSE l.latitude END, CASE WHEN l.is_virtual THEN NULL ELSE l.longitude END)`.execute(db);
  return rows.map((x) => x.id);
}
