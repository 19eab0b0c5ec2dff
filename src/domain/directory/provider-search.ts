/**
 * Provider search by NPI (docs/api/directory.md#providers-by-npi): one element per requested NPI, in request order,
 * each with the providers of that NPI in the caller's directory and their in-person and virtual
 * locations. `insurancePlanId` drives `accepts_patient_insurance`.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import {
  loadProviderLocationViews,
  type AcceptsInsurance,
  type InPersonLocationView,
  type ProviderView,
  type VirtualLocationView,
} from './provider-location-view.js';
import type { AvailabilityCache } from '../availability/summary-cache.js';
import type { DirectoryCaller } from './visible.js';
import type { KeptReference } from './kept-reference.js';

interface LocationCommon {
  provider_location_id: string;
  accepts_patient_insurance: AcceptsInsurance;
  booking_requirements: { required_fields: string[]; accepts_booking_requests_from: string[] };
  first_availability_date_in_provider_local_time?: string;
}

export type ProviderResult = ProviderView & {
  locations: (LocationCommon & InPersonLocationView)[];
  virtual_locations: (LocationCommon & VirtualLocationView)[];
  practice: { practice_id: string; practice_name: string };
};

export async function searchProvidersByNpi(
  db: Db,
  caller: DirectoryCaller,
  q: { npis: string[]; insurancePlanId?: string | undefined; publicBaseUrl: string; now?: Date; cache?: AvailabilityCache | undefined; keep?: KeptReference | undefined },
): Promise<{ npi: string; providers: ProviderResult[] }[]> {
  const npis = [...new Set(q.npis)];
  // NPI by NPI, the caller's own directory rows by the NPI copied onto them
  // (`developer_provider_locations_npi`, migration 0027; `active` is the provider-location's): one
  // index range per NPI and no join, so neither the directory's size nor the rest of the environment
  // decides the plan; 0.35 ms instead of 0.62 for the join through `providers_npi` (PGlite, 50 NPIs;
  // docs/performance.md, "The list of 50 NPIs: its lookup on the copied NPI, specialty names kept").
  // Per NPI (`OFFSET 0` keeps the LATERAL subquery from being flattened) because with one
  // `npi = ANY(…)` PostgreSQL scanned the whole table when the caller held most of it. The view
  // below checks each row again.
  const { rows } = await sql<{ id: string }>`
    SELECT x.id FROM (SELECT DISTINCT unnest(${npis}::text[]) AS npi) n
    CROSS JOIN LATERAL (
      SELECT dpl.provider_location_id AS id
      FROM developer_provider_locations dpl
      WHERE dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId} AND dpl.npi = n.npi AND dpl.active
      OFFSET 0
    ) x
    ORDER BY x.id`.execute(db);
  const views = await loadProviderLocationViews(db, caller, {
    ids: rows.map((r) => r.id),
    insurancePlanId: q.insurancePlanId,
    publicBaseUrl: q.publicBaseUrl,
    ...(q.now ? { now: q.now } : {}),
    cache: q.cache,
    keep: q.keep,
  });
  const byNpi = new Map<string, Map<string, ProviderResult>>();
  for (const r of rows) {
    const v = views.get(r.id);
    if (!v) continue;
    let providers = byNpi.get(v.provider.npi);
    if (!providers) byNpi.set(v.provider.npi, (providers = new Map()));
    let p = providers.get(v.provider.provider_id);
    if (!p) providers.set(v.provider.provider_id, (p = { ...v.provider, locations: [], virtual_locations: [], practice: v.practice }));
    const common: LocationCommon = {
      provider_location_id: v.provider_location_id,
      accepts_patient_insurance: v.accepts_patient_insurance,
      booking_requirements: v.booking_requirements,
      ...(v.first_availability_date_in_provider_local_time
        ? { first_availability_date_in_provider_local_time: v.first_availability_date_in_provider_local_time }
        : {}),
    };
    if (v.location) p.locations.push({ ...common, ...v.location });
    else if (v.virtual_location) p.virtual_locations.push({ ...common, ...v.virtual_location });
  }
  return npis.map((npi) => ({ npi, providers: [...(byNpi.get(npi)?.values() ?? [])] }));
}
