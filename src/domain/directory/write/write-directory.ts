/**
 * Writes a directory document into the database: idempotent upserts keyed by the directory's own
 * ids, in batches, inside the caller's transaction (so an import is all-or-nothing). Changes to
 * provider-locations are recorded for the 72-hour change summary (docs/api/directory.md#schedulable-entities). Each section
 * is a step of its own in this folder; this file runs them in order.
 */
import { sql, type Transaction } from 'kysely';
import type { Database, Env } from '../../../db/schema.js';
import type { DirectoryDocument } from '../document.js';
import { joinDeveloperDirectory } from './developer-directory.js';
import { recordDirectoryChanges } from './directory-changes.js';
import { writeFacilities } from './facilities.js';
import { writeLocations } from './locations.js';
import { dropWithdrawnReasonOverrides, writeProviderLocationChildren } from './provider-location-children.js';
import { writeProviderLocations } from './provider-locations.js';
import { writeProviders } from './providers.js';
import { writeReferenceSections } from './reference-sections.js';
import { refreshChangedSearchRows } from './search-rows.js';

export interface WriteSummary {
  practices: number;
  specialties: number;
  visit_reasons: number;
  insurance_carriers: number;
  insurance_plans: number;
  providers: number;
  locations: number;
  provider_locations: number;
  facilities: number;
  added: number;
  removed: number;
  profile_updated: number;
}

/** Writes `doc` for environment `env`; with `developerId`, its provider-locations join that developer's directory. */
export async function writeDirectory(
  trx: Transaction<Database>,
  env: Env,
  doc: DirectoryDocument,
  opts: { developerId?: string; onProgress?: (done: number, total: number) => void } = {},
): Promise<WriteSummary> {
  // Directory writers queue on the `directory_version` row before they lock any directory row. Its
  // triggers (migration 0010) move it after a transaction's first directory statement; without
  // this, two writers that each locked rows first (two processes upserting the sandbox fixtures at
  // once) could each wait for the other's row and version lock: a deadlock.
  await sql`SELECT version FROM directory_version FOR UPDATE`.execute(trx);
  const count = {
    practices: doc.practices?.length ?? 0,
    specialties: doc.specialties?.length ?? 0,
    visit_reasons: doc.visit_reasons?.length ?? 0,
    insurance_carriers: doc.insurance_carriers?.length ?? 0,
    insurance_plans: doc.insurance_plans?.length ?? 0,
    providers: doc.providers?.length ?? 0,
    locations: doc.locations?.length ?? 0,
    provider_locations: doc.provider_locations?.length ?? 0,
    facilities: doc.facilities?.length ?? 0,
  };
  // Progress counts records of every section (provider-locations twice: their rows, then their
  // plans and schedules); each step reports after it is written.
  const referenceCount = count.specialties + count.visit_reasons + count.insurance_carriers + count.insurance_plans + count.practices;
  const total = referenceCount + count.providers + count.locations + 2 * count.provider_locations + count.facilities;
  let done = 0;
  const progress = (n: number): void => {
    done += n;
    opts.onProgress?.(done, total);
  };

  const renamedSpecialties = await writeReferenceSections(trx, env, doc);
  progress(referenceCount);
  const providers = await writeProviders(trx, env, doc, renamedSpecialties);
  progress(count.providers);
  const locations = await writeLocations(trx, env, doc);
  progress(count.locations);
  const providerLocations = await writeProviderLocations(trx, env, doc);
  const changes = await recordDirectoryChanges(trx, env, providerLocations, providers.profileChanged, locations.profileChanged);
  progress(count.provider_locations);
  await writeProviderLocationChildren(trx, env, doc);
  await dropWithdrawnReasonOverrides(trx, env, doc);
  progress(count.provider_locations);
  await writeFacilities(trx, env, doc);
  progress(count.facilities);
  if (opts.developerId && providerLocations.ids.length) {
    await joinDeveloperDirectory(trx, env, opts.developerId, providerLocations.ids);
  }
  await refreshChangedSearchRows(trx, env, {
    providerLocations: providerLocations.written,
    providers: providers.written,
    locations: locations.written,
  });

  return {
    ...count,
    added: changes.filter((c) => c.change === 'added').length,
    removed: changes.filter((c) => c.change === 'removed').length,
    profile_updated: changes.filter((c) => c.change === 'profile_updated').length,
  };
}
