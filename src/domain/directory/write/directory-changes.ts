/**
 * What a directory write changed for the 72-hour change summary (`directory_changes`), and the
 * activation, deactivation and profile-update times of provider-locations that follow it.
 */
import { sql, type Transaction } from 'kysely';
import type { Database, Env } from '../../../db/schema.js';
import { chunks } from './batches.js';
import type { ProviderLocationsWritten } from './provider-locations.js';

/** One row of `directory_changes`. */
export interface DirectoryChange {
  env: Env;
  provider_location_id: string;
  change: 'added' | 'removed' | 'profile_updated';
}

/**
 * Records the changes of the provider-locations written (`pl`): added (new and active, or
 * reactivated), removed (deactivated), and profile updated (active and showing a provider in
 * `changedProviders` or a location in `changedLocations`, when not already added or removed).
 * Returns them.
 */
export async function recordDirectoryChanges(
  trx: Transaction<Database>,
  env: Env,
  pl: ProviderLocationsWritten,
  changedProviders: Set<string>,
  changedLocations: Set<string>,
): Promise<DirectoryChange[]> {
  const now = sql<Date>`now()`;
  const { activeBefore } = pl;
  const changes: DirectoryChange[] = [];
  for (const id of [...pl.written.inserted, ...pl.written.updated]) {
    const wasActive = activeBefore.get(id);
    const isActive = pl.activeNow.get(id)!;
    if (wasActive === undefined) {
      if (isActive) changes.push({ env, provider_location_id: id, change: 'added' });
    } else if (wasActive && !isActive) {
      changes.push({ env, provider_location_id: id, change: 'removed' });
    } else if (!wasActive && isActive) {
      changes.push({ env, provider_location_id: id, change: 'added' });
    }
    // Other settings of a provider-location (confirmation type, booking requirements, …) are not
    // its profile (docs/api/directory.md#schedulable-entities): a changed provider or location below is.
  }
  // Activation time and deactivation time follow the `active` flag.
  const reactivated = changes.filter((c) => c.change === 'added' && activeBefore.has(c.provider_location_id));
  for (const batch of chunks(reactivated.map((c) => c.provider_location_id))) {
    await trx.updateTable('provider_locations').set({ go_live_at: now, deactivated_at: null })
      .where('env', '=', env).where('id', 'in', batch).execute();
  }
  for (const batch of chunks(changes.filter((c) => c.change === 'removed').map((c) => c.provider_location_id))) {
    await trx.updateTable('provider_locations').set({ deactivated_at: now }).where('env', '=', env).where('id', 'in', batch).execute();
  }
  // A changed provider or location profile updates every active provider-location that shows it.
  const alreadyNoted = new Set(changes.map((c) => c.provider_location_id));
  if (changedProviders.size || changedLocations.size) {
    const affected = await trx
      .selectFrom('provider_locations')
      .select('id')
      .where('env', '=', env)
      .where('active', '=', true)
      .where((eb) =>
        eb.or([
          ...(changedProviders.size ? [eb('provider_id', 'in', [...changedProviders])] : []),
          ...(changedLocations.size ? [eb('location_id', 'in', [...changedLocations])] : []),
        ]),
      )
      .execute();
    for (const { id } of affected) {
      if (!alreadyNoted.has(id)) changes.push({ env, provider_location_id: id, change: 'profile_updated' });
    }
  }
  const profileUpdated = changes.filter((c) => c.change === 'profile_updated').map((c) => c.provider_location_id);
  for (const batch of chunks(profileUpdated)) {
    await trx.updateTable('provider_locations').set({ profile_updated_at: now }).where('env', '=', env).where('id', 'in', batch).execute();
  }
  for (const batch of chunks(changes)) await trx.insertInto('directory_changes').values(batch).execute();
  return changes;
}
