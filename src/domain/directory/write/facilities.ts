/** The facilities section of a directory write. */
import type { Transaction } from 'kysely';
import type { Database, Env } from '../../../db/schema.js';
import type { DirectoryDocument } from '../document.js';
import { upsert } from './keyed-rows.js';

/** Upserts the facilities of `doc`. */
export async function writeFacilities(trx: Transaction<Database>, env: Env, doc: DirectoryDocument): Promise<void> {
  await upsert(
    trx,
    'facilities',
    (doc.facilities ?? []).map((f) => ({ env, id: f.id, name: f.name, npi: f.npi ?? null, building_type: f.building_type, provider_location_id: f.provider_location_id })),
    ['name', 'npi', 'building_type', 'provider_location_id'],
  );
}
