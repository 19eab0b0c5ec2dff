/**
 * The caller's designated directory (docs/api/directory.md#your-directory): the active provider-locations listed for the
 * developer in `developer_provider_locations`, in the caller's environment. Every directory read
 * starts from here, so nothing outside the directory can leak.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';

export interface DirectoryCaller {
  env: Env;
  developerId: string;
}

/** `developer_provider_locations as dpl` joined to its active `provider_locations as pl`. */
export function directoryProviderLocations(db: Db, caller: DirectoryCaller) {
  return db
    .selectFrom('developer_provider_locations as dpl')
    .innerJoin('provider_locations as pl', (j) => j.onRef('pl.env', '=', 'dpl.env').onRef('pl.id', '=', 'dpl.provider_location_id'))
    .where('dpl.env', '=', caller.env)
    .where('dpl.developer_id', '=', caller.developerId)
    .where('pl.active', '=', true);
}

/** True when a provider-location id has the interface's shape `pr_<id>|lo_<id>` (docs/api/conventions.md#identifiers). */
export function isProviderLocationId(id: string): boolean {
  return /^pr_[^|]+\|lo_[^|]+$/.test(id);
}
