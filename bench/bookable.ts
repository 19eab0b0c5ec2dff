/**
 * The provider-locations the booking benchmarks book (bench/scheduling.ts, bench/profile-server.ts).
 * Loads no module of `src` (the profiler's child runs an older tree's): Kysely, and types only.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../src/db/schema.js';

/**
 * Provider-locations a self-pay patient can book (active, no insurance required, self-pay accepted)
 * in `developerId`'s directory, each with the first visit reason its provider offers, by id. Callers
 * keep one per provider: a provider's locations share its time.
 */
export function bookableRows(db: Kysely<Database>, developerId: string): Promise<{ id: string; provider_id: string; reason: string }[]> {
  return db
    .selectFrom('developer_provider_locations as d')
    .innerJoin('provider_locations as pl', (j) => j.onRef('pl.env', '=', 'd.env').onRef('pl.id', '=', 'd.provider_location_id'))
    .innerJoin('providers as p', (j) => j.onRef('p.env', '=', 'pl.env').onRef('p.id', '=', 'pl.provider_id'))
    .select(['pl.id', 'pl.provider_id', sql<string>`p.visit_reason_ids[1]`.as('reason')])
    .where('d.developer_id', '=', developerId)
    .where('pl.active', '=', true)
    .where(sql<boolean>`cardinality(p.visit_reason_ids) > 0`)
    .where(sql<boolean>`NOT ('patient.insurance' = ANY(pl.required_fields))`)
    .where(sql<boolean>`'self_pay' = ANY(pl.accepts_booking_requests_from)`)
    .orderBy('pl.id')
    .execute();
}

