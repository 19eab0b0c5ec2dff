/**
 * Sandbox isolation of developers' writes (docs/decisions/0007-sandbox-writes-isolated.md): in the
 * sandbox, a developer's directory may share provider-locations with other developers' (the
 * sandbox fixtures, or one import given to two developers). Calendar pushes and insurance-mapping
 * changes to such a provider-location would change what the others see, so the sandbox refuses
 * them; a write that is accepted therefore touches only the writer's own provider-locations.
 * Production is one shared truth per practice and is not restricted.
 */
import type { Kysely } from 'kysely';
import type { Database, Env } from '../../db/schema.js';

/**
 * The provider-locations among `providerLocationIds` (or, with `providerId`, that provider's
 * provider-locations in the developer's directory) that another developer's directory also holds.
 */
export async function sharedWithOtherDevelopers(
  db: Kysely<Database>,
  caller: { env: Env; developerId: string },
  scope: { providerId: string } | { providerLocationIds: string[] },
): Promise<string[]> {
  let q = db
    .selectFrom('developer_provider_locations as mine')
    .innerJoin('developer_provider_locations as theirs', (j) =>
      j.onRef('theirs.env', '=', 'mine.env').onRef('theirs.provider_location_id', '=', 'mine.provider_location_id').onRef('theirs.developer_id', '!=', 'mine.developer_id'),
    )
    .select('mine.provider_location_id')
    .distinct()
    .where('mine.env', '=', caller.env)
    .where('mine.developer_id', '=', caller.developerId);
  if ('providerId' in scope) {
    q = q
      .innerJoin('provider_locations as pl', (j) => j.onRef('pl.env', '=', 'mine.env').onRef('pl.id', '=', 'mine.provider_location_id'))
      .where('pl.provider_id', '=', scope.providerId);
  } else {
    if (scope.providerLocationIds.length === 0) return [];
    q = q.where('mine.provider_location_id', 'in', scope.providerLocationIds);
  }
  return (await q.execute()).map((r) => r.provider_location_id).sort();
}
