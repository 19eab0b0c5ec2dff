/**
 * The provider-locations section of a directory write: their own rows, and for each whether it was
 * active before the write (what `recordDirectoryChanges` compares).
 */
import type { Transaction } from 'kysely';
import type { Database, Env } from '../../../db/schema.js';
import { providerLocationId, type DirectoryDocument } from '../document.js';
import { chunks } from './batches.js';
import { upsert, type Written } from './keyed-rows.js';

/** What writing the provider-locations did. */
export interface ProviderLocationsWritten {
  /** The provider-location ids of the document, in its order. */
  ids: string[];
  written: Written;
  /** Whether each provider-location of the document that already existed was active before the write. */
  activeBefore: Map<string, boolean>;
  /** Whether each provider-location of the document is active now. */
  activeNow: Map<string, boolean>;
}

/** Upserts the provider-locations of `doc`, reading first which of them existed and were active. */
export async function writeProviderLocations(
  trx: Transaction<Database>,
  env: Env,
  doc: DirectoryDocument,
): Promise<ProviderLocationsWritten> {
  const plRows = (doc.provider_locations ?? []).map((pl) => ({
    env,
    id: providerLocationId(pl.provider_id, pl.location_id),
    provider_id: pl.provider_id,
    location_id: pl.location_id,
    provider_location_type: pl.provider_location_type ?? 'in_person_provider',
    visit_type: pl.visit_type ?? (pl.provider_location_type === 'virtual_provider' ? 'platform_video_service' : 'in_person'),
    confirmation_type: pl.confirmation_type ?? 'auto',
    required_fields: pl.required_fields ?? [],
    accepts_booking_requests_from: pl.accepts_booking_requests_from ?? ['in_network', 'out_of_network', 'self_pay'],
    is_provider_resource: pl.is_provider_resource ?? false,
    active: pl.active ?? true,
  }));
  const activeBefore = new Map<string, boolean>();
  for (const batch of chunks(plRows.map((r) => r.id))) {
    const rows = await trx
      .selectFrom('provider_locations')
      .select(['id', 'active'])
      .where('env', '=', env)
      .where('id', 'in', batch)
      .execute();
    rows.forEach((r) => activeBefore.set(r.id, r.active));
  }
  const written = await upsert(trx, 'provider_locations', plRows, [
    'provider_location_type', 'visit_type', 'confirmation_type', 'required_fields', 'accepts_booking_requests_from',
    'is_provider_resource', 'active',
  ]);
  return { ids: plRows.map((r) => r.id), written, activeBefore, activeNow: new Map(plRows.map((r) => [r.id, r.active])) };
}
