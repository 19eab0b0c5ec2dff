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
  q: { npis: string[]; insurancePlanId?: string | undefined; publicBaseUrl: string; now?: Date; cache?: AvailabilityCache | undefined },
): Promise<{ npi: string; providers: ProviderResult[] }[]> {
  const npis = [...new Set(q.npis)];
  // NPI by NPI (`providers_npi`), then each provider's provider-locations by their unique key: never
  // a hash join over every provider or provider-location, which the planner chose for 50 NPIs of a
  // directory of a few thousand (docs/performance.md, "Directory reads (issue #20 §7)"). `OFFSET 0`
  // keeps the LATERAL subquery a subquery run per NPI (a plain one would be flattened into a join).
  const { rows } = await sql<{ id: string }>`
    SELECT x.id FROM (SELECT DISTINCT unnest(${npis}::text[]) AS npi) n
    CROSS JOIN LATERAL (
      SELECT pl.id
      FROM providers p
      JOIN provider_locations pl ON pl.env = p.env AND pl.provider_id = p.id AND pl.active
      JOIN developer_provider_locations dpl ON dpl.env = pl.env AND dpl.provider_location_id = pl.id AND dpl.developer_id = ${caller.developerId}
      WHERE p.env = ${caller.env} AND p.npi = n.npi
      OFFSET 0
    ) x
    ORDER BY x.id`.execute(db);
  const views = await loadProviderLocationViews(db, caller, {
    ids: rows.map((r) => r.id),
    insurancePlanId: q.insurancePlanId,
    publicBaseUrl: q.publicBaseUrl,
    ...(q.now ? { now: q.now } : {}),
    cache: q.cache,
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
