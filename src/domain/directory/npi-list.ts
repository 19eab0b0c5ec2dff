/** The NPI reference list (docs/api/directory.md#npi-list): distinct NPIs of the caller's active providers. */
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
  // The page as one JSON array (one native JSON.parse instead of the driver parsing up to 60,000 rows:
  // ~50 ms less CPU in this process for 40,000 NPIs, measured) and the count of the same DISTINCT.
  const { rows } = await sql<{ npis: string[] | null; total: string | number }>`
    WITH d AS MATERIALIZED (${distinct})
    SELECT (SELECT json_agg(npi ORDER BY npi) FROM (SELECT npi FROM d ORDER BY npi LIMIT ${q.pageSize} OFFSET ${q.page * q.pageSize}) p) AS npis,
           (SELECT count(*) FROM d) AS total`.execute(db);
  return { total: Number(rows[0]?.total ?? 0), npis: rows[0]?.npis ?? [] };
}
