/** The locations section of a directory write. */
import { sql, type Transaction } from 'kysely';
import type { Database, Env } from '../../../db/schema.js';
import type { DirectoryDocument } from '../document.js';
import { changedColumns, upsert, type Written } from './keyed-rows.js';

const LOCATION_COLUMNS = [
  'is_virtual', 'location_name', 'address1', 'address2', 'city', 'state', 'zip_code', 'latitude', 'longitude',
  'time_zone', 'phone_number', 'phone_extension',
] as const;

/** The columns of a location whose change is a profile update: its address and kind, not its phone. */
const LOCATION_PROFILE = ['is_virtual', 'location_name', 'address1', 'address2', 'city', 'state', 'zip_code', 'latitude', 'longitude', 'time_zone'] as const;

/** Writes the locations of `doc`; returns what the upsert wrote and the locations whose profile changed. */
export async function writeLocations(
  trx: Transaction<Database>,
  env: Env,
  doc: DirectoryDocument,
): Promise<{ written: Written; profileChanged: Set<string> }> {
  const locationRows = (doc.locations ?? []).map((l) => ({
    env,
    id: l.id,
    is_virtual: l.is_virtual ?? false,
    location_name: l.location_name ?? null,
    address1: l.address1 ?? null,
    address2: l.address2 ?? null,
    city: l.city ?? null,
    state: l.state,
    zip_code: l.zip_code ?? null,
    latitude: l.latitude ?? null,
    longitude: l.longitude ?? null,
    time_zone: l.time_zone,
    phone_number: l.phone_number ?? null,
    phone_extension: l.phone_extension ?? null,
  }));
  const profileChanged = await changedColumns(trx, 'locations', env, locationRows, [...LOCATION_PROFILE]);
  const written = await upsert(trx, 'locations', locationRows, [...LOCATION_COLUMNS], { updated_at: sql<Date>`now()` });
  return { written, profileChanged };
}
