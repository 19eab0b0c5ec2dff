/**
 * The ProviderLocation resource (docs/api/directory.md#the-providerlocation-resource), built for a set of ids in the
 * caller's directory: one statement reads the rows (with their specialty names, and their weekly
 * schedules when availability is computed here), then the availability summaries come from
 * `directoryAvailabilityOfRows`, which reads nothing more about the rows themselves.
 * Shared by provider-location search and read, the provider search (docs/api/directory.md#providers-by-npi) and facilities.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { AvailabilityCache } from '../availability/summary-cache.js';
import { directoryAvailabilityOfRows } from '../availability/directory-availability.js';
import type { AvailabilitySummary } from '../availability/summaries.js';
import type { LocalClock } from '../scheduling/local-time.js';
import { weeklyBlocksAggSql } from '../scheduling/schedule-data.js';
import type { DirectoryCaller } from './visible.js';
import { genericPlan } from '../../db/generic-plan.js';
import type { KeptReference } from './kept-reference.js';

export type AcceptsInsurance = 'accepted' | 'not_accepted' | 'insurance_not_specified';

export interface ProviderView {
  provider_id: string;
  npi: string;
  profile_url: string;
  first_name: string;
  last_name: string;
  title?: string;
  full_name: string;
  gender_identity?: string;
  specialties: string[];
  specialty_ids: string[];
  default_visit_reason_id?: string;
  visit_reason_ids: string[];
  statement?: string;
  provider_photo_url?: string;
  languages: string[];
  credentials: { certifications: string[]; education: { institutions: string[] } };
}

export interface InPersonLocationView {
  address1: string;
  address2?: string;
  city: string;
  state: string;
  zip_code: string;
  latitude: number;
  longitude: number;
  location_name?: string;
  phone_number?: string;
  phone_extension?: string;
  time_zone: string;
  distance_to_patient_mi?: number;
}

export interface VirtualLocationView {
  state: string;
  location_name?: string;
  time_zone: string;
}

export interface ProviderLocationView {
  provider_location_id: string;
  provider_location_type: 'in_person_provider' | 'virtual_provider';
  accepts_patient_insurance: AcceptsInsurance;
  first_availability_date_in_provider_local_time?: string;
  provider: ProviderView;
  location?: InPersonLocationView;
  virtual_location?: VirtualLocationView;
  practice: { practice_id: string; practice_name: string };
  booking_requirements: { required_fields: string[]; accepts_booking_requests_from: string[] };
  /** Not serialized: the location id (facilities use it). */
  location_id: string;
}

interface Row {
  id: string;
  provider_location_type: 'in_person_provider' | 'virtual_provider';
  required_fields: string[];
  accepts_booking_requests_from: string[];
  provider_id: string;
  npi: string;
  first_name: string;
  last_name: string;
  title: string | null;
  gender_identity: string | null;
  statement: string | null;
  photo_url: string | null;
  languages: string[];
  certifications: string[];
  education_institutions: string[];
  specialty_ids: string[];
  /**
   * The names of `specialty_ids` that exist, in their order; null when the kept names are of the
   * version this statement saw (then they come from those).
   */
  specialty_names: string[] | null;
  main_specialty_id: string | null;
  default_visit_reason_id: string | null;
  visit_reason_ids: string[];
  location_id: string;
  is_virtual: boolean;
  location_name: string | null;
  address1: string | null;
  address2: string | null;
  city: string | null;
  state: string;
  zip_code: string | null;
  latitude: number | null;
  longitude: number | null;
  time_zone: string;
  phone_number: string | null;
  phone_extension: string | null;
  practice_id: string;
  practice_name: string;
  accepts: boolean | null;
  /** `weeklyBlocksAggSql` of the weekly schedule, when availability is computed (no `cache`). */
  blocks?: string | null;
}

const opt = <K extends string, V>(key: K, v: V | null | undefined): { [P in K]?: V } =>
  (v === null || v === undefined ? {} : { [key]: v }) as { [P in K]?: V };

/** Full display name, e.g. "Ava Patel, MD". */
export function fullName(first: string, last: string, title: string | null): string {
  return title ? `${first} ${last}, ${title}` : `${first} ${last}`;
}

/**
 * Loads the views of `ids` that are in the caller's directory (others are absent from the map).
 * `insurancePlanId` drives `accepts_patient_insurance` (docs/api/directory.md#providers-by-npi); `distances` (miles)
 * fills `distance_to_patient_mi`; with `cache`, recent availability summaries are reused
 * (src/domain/availability/summary-cache.ts), else they are computed from current data, with
 * `clock`'s memo of local-time conversions when given (a new clock per call has an empty one);
 * `availability: false` (facilities, which show none) leaves them out. With `keep`, specialty names
 * come from its kept names when they are of the directory version the statement saw, else the
 * statement reads them and the names are read again to be kept (src/domain/directory/kept-reference.ts):
 * computing them in the statement was ~15 % of it for 56 rows on PGlite (docs/performance.md, "The
 * list of 50 NPIs: its lookup on the copied NPI, specialty names kept").
 *
 * Each id is looked up by primary key (LATERAL … LIMIT 1) in the caller's directory, so the cost
 * follows the number of ids, never the size of the directory, whatever the planner estimates of an
 * id list (a hash join over every provider-location was chosen for 58 ids of 2,000, measured).
 */
export async function loadProviderLocationViews(
  db: Db,
  caller: DirectoryCaller,
  input: {
    ids: string[];
    insurancePlanId?: string | undefined;
    distances?: Map<string, number>;
    publicBaseUrl: string;
    now?: Date;
    cache?: AvailabilityCache | undefined;
    /** Local-time conversions to share with other reads (one per application); default: the cache's, else a new one. */
    clock?: LocalClock | undefined;
    availability?: boolean;
    /** The application's kept reference (specialty names by directory version). */
    keep?: KeptReference | undefined;
  },
): Promise<Map<string, ProviderLocationView>> {
  const out = new Map<string, ProviderLocationView>();
  if (input.ids.length === 0) return out;
  const plan = input.insurancePlanId ?? null;
  const withAvailability = input.availability !== false;
  // Without a memo every summary is computed, from the weekly schedule read here with the row.
  const blocks = withAvailability && !input.cache
    ? sql`, (SELECT ${weeklyBlocksAggSql()} FROM weekly_schedules ws WHERE ws.env = pl.env AND ws.provider_location_id = pl.id) AS blocks`
    : sql``;
  // The rows come back as one JSON value: one native JSON.parse instead of the driver decoding some
  // forty fields per row (~1.7 ms less CPU for 60 rows on PGlite, measured).
  const kept = input.keep?.specialtyNames(caller.env);
  const { rows: [agg] } = await genericPlan(sql<{ v: string; j: Row[] | null }>`
    SELECT (SELECT version::text FROM directory_version) AS v, json_agg(v) AS j FROM (SELECT DISTINCT unnest(${input.ids}::text[]) AS id) i
    CROSS JOIN LATERAL (
      SELECT pl.id, pl.provider_location_type, pl.required_fields, pl.accepts_booking_requests_from,
        p.id AS provider_id, p.npi, p.first_name, p.last_name, p.title, p.gender_identity, p.statement, p.photo_url,
        p.languages, p.certifications, p.education_institutions, p.specialty_ids, p.main_specialty_id,
        p.default_visit_reason_id, p.visit_reason_ids,
        CASE WHEN (SELECT version FROM directory_version) = ${kept?.version ?? null}::bigint THEN NULL
             ELSE ARRAY(SELECT s.name FROM unnest(p.specialty_ids) WITH ORDINALITY u(id, n)
                        JOIN specialties s ON s.env = p.env AND s.id = u.id ORDER BY u.n) END AS specialty_names,
        l.id AS location_id, l.is_virtual, l.location_name, l.address1, l.address2, l.city, l.state, l.zip_code,
        l.latitude, l.longitude, l.time_zone, l.phone_number, l.phone_extension,
        pt.id AS practice_id, pt.name AS practice_name,
        CASE WHEN ${plan}::text IS NULL THEN NULL
             WHEN pt.insurance_managed_at_practice THEN EXISTS (SELECT 1 FROM practice_insurance_plans pip
               WHERE pip.env = pt.env AND pip.practice_id = pt.id AND pip.insurance_plan_id = ${plan}::text)
             ELSE EXISTS (SELECT 1 FROM provider_location_insurance_plans plip
               WHERE plip.env = pl.env AND plip.provider_location_id = pl.id AND plip.insurance_plan_id = ${plan}::text)
        END AS accepts ${blocks}
      FROM developer_provider_locations dpl
      JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id
      JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
      JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
      JOIN practices pt ON pt.env = p.env AND pt.id = p.practice_id
      WHERE dpl.env = ${caller.env} AND dpl.developer_id = ${caller.developerId} AND dpl.provider_location_id = i.id AND pl.active
      LIMIT 1
    ) v`).execute(db);
  const rows = agg?.j ?? [];
  if (rows.length === 0) return out;
  // Names of an older version (or none yet): this statement read them; keep those of the version now.
  // A failed read only leaves them unkept (the next view asks again): this answer has its names.
  if (input.keep && agg!.v !== kept?.version) await input.keep.readSpecialtyNamesOlderThan(db, caller.env, agg!.v).catch(() => undefined);
  const names = (r: Row): string[] => r.specialty_names ?? r.specialty_ids.flatMap((id) => kept!.names.get(id) ?? []);

  const availability = withAvailability
    ? await directoryAvailabilityOfRows(db, {
        env: caller.env,
        rows,
        ...(input.now ? { now: input.now } : {}),
        ...(input.cache ? { cache: input.cache } : {}),
        ...(input.clock ? { clock: input.clock } : {}),
      })
    : new Map<string, AvailabilitySummary>();

  for (const r of rows) {
    const avail = availability.get(r.id);
    const provider: ProviderView = {
      provider_id: r.provider_id,
      npi: r.npi,
      profile_url: `${input.publicBaseUrl}/v1/providers?npis=${r.npi}`,
      first_name: r.first_name,
      last_name: r.last_name,
      ...opt('title', r.title),
      full_name: fullName(r.first_name, r.last_name, r.title),
      ...opt('gender_identity', r.gender_identity),
      specialties: names(r),
      specialty_ids: r.specialty_ids,
      ...opt('default_visit_reason_id', r.default_visit_reason_id),
      visit_reason_ids: r.visit_reason_ids,
      ...opt('statement', r.statement),
      ...opt('provider_photo_url', r.photo_url),
      languages: r.languages,
      credentials: { certifications: r.certifications, education: { institutions: r.education_institutions } },
    };
    const virtual = r.is_virtual || r.provider_location_type === 'virtual_provider';
    const distance = input.distances?.get(r.id);
    out.set(r.id, {
      provider_location_id: r.id,
      provider_location_type: virtual ? 'virtual_provider' : 'in_person_provider',
      accepts_patient_insurance: r.accepts === null ? 'insurance_not_specified' : r.accepts ? 'accepted' : 'not_accepted',
      ...opt('first_availability_date_in_provider_local_time', avail?.first_availability_date_in_provider_local_time),
      provider,
      ...(virtual || r.latitude === null || r.longitude === null
        ? { virtual_location: { state: r.state, ...opt('location_name', r.location_name), time_zone: r.time_zone } }
        : {
            location: {
              address1: r.address1 ?? '',
              ...opt('address2', r.address2),
              city: r.city ?? '',
              state: r.state,
              zip_code: r.zip_code ?? '',
              latitude: r.latitude,
              longitude: r.longitude,
              ...opt('location_name', r.location_name),
              ...opt('phone_number', r.phone_number),
              ...opt('phone_extension', r.phone_extension),
              time_zone: r.time_zone,
              ...(distance !== undefined ? { distance_to_patient_mi: Math.round(distance * 10) / 10 } : {}),
            },
          }),
      practice: { practice_id: r.practice_id, practice_name: r.practice_name },
      booking_requirements: { required_fields: r.required_fields, accepts_booking_requests_from: r.accepts_booking_requests_from },
      location_id: r.location_id,
    });
  }
  return out;
}
