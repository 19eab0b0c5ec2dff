/**
 * The search rows (`provider_location_search`, migration 0008) a directory write keeps: those of
 * every provider-location whose own row, provider or location it changed.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, Env } from '../../../db/schema.js';
import { chunks, SEARCH_BATCH } from './batches.js';
import type { Written } from './keyed-rows.js';

/**
 * Rebuilds the search rows (`provider_location_search`, migration 0008) of the given
 * provider-locations from their provider and location: one row per term of the provider
 * (`sp:` each of `specialty_ids`, `vr:` each of `visit_reason_ids`), none for an inactive one.
 * The same statement as the migration's fill, limited to `ids`.
 */
export async function refreshSearchRows(trx: Kysely<Database>, env: Env, ids: string[]): Promise<void> {
  for (const batch of chunks(ids, SEARCH_BATCH)) {
    const list = sql`${sql.val(batch)}::text[]`;
    await sql`DELETE FROM provider_location_search WHERE env = ${env} AND provider_location_id = ANY(${list})`.execute(trx);
    await sql`
      INSERT INTO provider_location_search (env, term, provider_location_id, is_virtual, state, latitude, longitude)
      SELECT pl.env, t.term, pl.id, l.is_virtual OR pl.provider_location_type = 'virtual_provider', l.state, l.latitude, l.longitude
      FROM provider_locations pl
      JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
      JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
      CROSS JOIN LATERAL (
        SELECT 'sp:' || s FROM unnest(p.specialty_ids) s
        UNION
        SELECT 'vr:' || v FROM unnest(p.visit_reason_ids) v
      ) t(term)
      WHERE pl.env = ${env} AND pl.id = ANY(${list}) AND pl.active`.execute(trx);
  }
}

/**
 * Refreshes the search rows of every provider-location whose own row (`providerLocations`),
 * provider (`providers`) or location (`locations`) a write inserted or changed. A provider or
 * location inserted by the write has no provider-location but those it inserted.
 */
export async function refreshChangedSearchRows(
  trx: Transaction<Database>,
  env: Env,
  written: { providerLocations: Written; providers: Written; locations: Written },
): Promise<void> {
  const stale = new Set([...written.providerLocations.inserted, ...written.providerLocations.updated]);
  for (const [column, ids] of [['provider_id', written.providers.updated], ['location_id', written.locations.updated]] as const) {
    for (const batch of chunks(ids, SEARCH_BATCH)) {
      const { rows } = await sql<{ id: string }>`
        SELECT id FROM provider_locations WHERE env = ${env} AND ${sql.ref(column)} = ANY(${sql.val(batch)}::text[])`.execute(trx);
      rows.forEach((r) => stale.add(r.id));
    }
  }
  await refreshSearchRows(trx, env, [...stale]);
}
