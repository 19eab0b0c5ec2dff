/** The NPI reference list (interface.md §2.7 "NPI list", §4.10): distinct NPIs of the caller's active providers. */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { DirectoryCaller } from './visible.js';

/** One page of NPIs in ascending order and the total number of distinct NPIs. */
export async function listNpis(
  db: Db,
  caller: DirectoryCaller,
  q: { page: number; pageSize: number },
): Promise<{ total: number; npis: string[] }> {
  const distinct = sql`
    SELECT DISTINCT p.npi
    FROM developer_provider_locations dpl
    JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id AND pl.active
    JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    WHERE dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId}`;
  const { rows } = await sql<{ npi: string; total: string | number }>`
    SELECT npi, count(*) OVER () AS total FROM (${distinct}) d
    ORDER BY npi LIMIT ${q.pageSize} OFFSET ${q.page * q.pageSize}`.execute(db);
  if (rows.length === 0) {
    const c = await sql<{ n: string | number }>`SELECT count(*) AS n FROM (${distinct}) d`.execute(db);
    return { total: Number(c.rows[0]?.n ?? 0), npis: [] };
  }
  return { total: Number(rows[0]!.total), npis: rows.map((r) => r.npi) };
}
