/**
 * What of the directory a practice caller may reach (docs/decisions/0014-practice-workspace.md,
 * "Isolation"): the provider-locations and providers of the caller's own practice. Anything else,
 * whether it exists or not, is `not_found`, so ids of another practice cannot be probed. A provider
 * user reaches only their own provider.
 */
import { sql, type Kysely } from 'kysely';
import type { Database, Env } from '../../../db/schema.js';
import { notFound } from '../../errors.js';
import { loadProviderLocations, type ProviderLocationContext } from '../../scheduling/schedule-data.js';
import type { StaffPrincipal } from '../staff-principal.js';

/** The caller of a schedule function: a `StaffPrincipal` has all of it. */
export type PracticeCaller = Pick<StaffPrincipal, 'env' | 'practiceId' | 'userId' | 'role' | 'providerId'>;

/** True when `caller` may reach provider `providerId` of its practice (a provider user: only their own). */
function reaches(caller: PracticeCaller, practiceId: string, providerId: string): boolean {
  return practiceId === caller.practiceId && (caller.role !== 'provider' || caller.providerId === providerId);
}

/** The provider-location `id` of the caller's practice, or `not_found` naming `field`. */
export async function practiceProviderLocation(
  db: Kysely<Database>,
  caller: PracticeCaller,
  id: string,
  field = 'provider_location_id',
): Promise<ProviderLocationContext> {
  const pl = (await loadProviderLocations(db, caller.env, [id])).get(id);
  if (!pl || !reaches(caller, pl.practiceId, pl.providerId)) throw notFound(`provider location ${id} not found`, field);
  return pl;
}

/** Every provider-location (active or not) of provider `providerId` of the caller's practice, or `not_found` naming `field`. */
export async function practiceProvider(
  db: Kysely<Database>,
  caller: PracticeCaller,
  providerId: string,
  field = 'provider_id',
): Promise<Map<string, ProviderLocationContext>> {
  const p = await db.selectFrom('providers').select('practice_id').where('env', '=', caller.env).where('id', '=', providerId).executeTakeFirst();
  if (!p || !reaches(caller, p.practice_id, providerId)) throw notFound(`provider ${providerId} not found`, field);
  const ids = await db.selectFrom('provider_locations').select('id').where('env', '=', caller.env).where('provider_id', '=', providerId).execute();
  return loadProviderLocations(db, caller.env, ids.map((r) => r.id));
}

/**
 * Takes the provider's schedule lock for the rest of the transaction: moves its calendar version
 * (migration 0010), creating the row if it is missing. A booking of this provider reads that row
 * `FOR SHARE` in its write, so bookings and this change serialise (docs/scheduling.md, "Races").
 */
export async function lockProviderSchedule(trx: Kysely<Database>, env: Env, providerId: string): Promise<void> {
  await sql`
    INSERT INTO calendar_versions AS v (env, provider_id, version) VALUES (${env}, ${providerId}, 1)
    ON CONFLICT (env, provider_id) DO UPDATE SET version = v.version + 1`.execute(trx);
}
