/**
 * Response and parameter schemas of the directory and reference operations (docs/api/directory.md, docs/api/README.md#operations; docs/api/conventions.md#additional-fields). Responses are serialized from these schemas, so a field
 * that is not here is not sent.
 */
import { Type } from 'typebox';
import { CARE_CATEGORIES, PLAN_STATUSES, PLAN_TYPES, PROGRAM_TYPES } from '../../../domain/directory/insurance-plans.js';

const Str = Type.String();
const OptStr = Type.Optional(Type.String());
const StrArr = Type.Array(Type.String());

/** A string enum (`{type: string, enum: [...]}`) typed as the union of its values. */
export const enumOf = <T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>(Type.String({ enum: [...values], ...(description ? { description } : {}) }));

export const CareCategory = enumOf(CARE_CATEGORIES);

export const Availability = Type.Object({
  next_available_utc: OptStr,
  next_28_days: enumOf(['none', 'limited', 'available'] as const),
  url: Str,
});

export const SchedulableEntity = Type.Object({
  id: Str,
  npi: OptStr,
  type: Type.Literal('provider_location'),
  go_live_timestamp_utc: Str,
  profile_last_modified_timestamp_utc: Str,
  new_patient_availability: Availability,
  existing_patient_availability: Availability,
  time_zone: OptStr,
  main_specialty_id: OptStr,
  main_specialty_name: OptStr,
});

export const RecentChangeSummary = Type.Object({
  schedulable_entities_added: StrArr,
  schedulable_entities_removed: StrArr,
  schedulable_entities_profile_updated: StrArr,
});

export const BookingRequirements = Type.Object({
  required_fields: StrArr,
  accepts_booking_requests_from: StrArr,
});

export const Practice = Type.Object({ practice_id: Str, practice_name: Str });

export const AcceptsInsurance = enumOf(['accepted', 'not_accepted', 'insurance_not_specified'] as const);

const providerFields = {
  provider_id: Str,
  npi: Str,
  profile_url: Str,
  first_name: Str,
  last_name: Str,
  title: OptStr,
  full_name: Str,
  gender_identity: OptStr,
  specialties: StrArr,
  specialty_ids: StrArr,
  default_visit_reason_id: OptStr,
  visit_reason_ids: StrArr,
  statement: OptStr,
  provider_photo_url: OptStr,
  languages: StrArr,
  credentials: Type.Object({ certifications: StrArr, education: Type.Object({ institutions: StrArr }) }),
};

export const Provider = Type.Object(providerFields);

const inPersonFields = {
  address1: Str,
  address2: OptStr,
  city: Str,
  state: Str,
  zip_code: Str,
  latitude: Type.Number(),
  longitude: Type.Number(),
  location_name: OptStr,
  phone_number: OptStr,
  phone_extension: OptStr,
  time_zone: Str,
};

export const InPersonLocation = Type.Object({ ...inPersonFields, distance_to_patient_mi: Type.Optional(Type.Number()) });
export const VirtualLocation = Type.Object({ state: Str, location_name: OptStr, time_zone: Str });

const locationCommon = {
  provider_location_id: Str,
  accepts_patient_insurance: AcceptsInsurance,
  booking_requirements: BookingRequirements,
  first_availability_date_in_provider_local_time: OptStr,
};

/** A provider of the NPI search (docs/api/directory.md#providers-by-npi). */
export const ProviderSearchProvider = Type.Object({
  ...providerFields,
  locations: Type.Array(Type.Object({ ...locationCommon, ...inPersonFields })),
  virtual_locations: Type.Array(Type.Object({ ...locationCommon, state: Str, location_name: OptStr, time_zone: Str })),
  practice: Practice,
});

/** ProviderLocation (docs/api/README.md#operations). */
export const ProviderLocation = Type.Object({
  provider_location_id: Str,
  provider_location_type: enumOf(['in_person_provider', 'virtual_provider'] as const),
  accepts_patient_insurance: AcceptsInsurance,
  first_availability_date_in_provider_local_time: OptStr,
  provider: Provider,
  location: Type.Optional(InPersonLocation),
  virtual_location: Type.Optional(VirtualLocation),
  practice: Practice,
  booking_requirements: BookingRequirements,
});

export const Specialty = Type.Object({
  id: Str,
  name: Str,
  care_category: CareCategory,
  default_visit_reason_id: Str,
  default_visit_reason_name: Str,
});

export const VisitReason = Type.Object({ id: Str, name: Str, specialty_id: Str });

export const InsurancePlan = Type.Object({
  id: Str,
  name: Str,
  carrier: Type.Object({ id: Str, name: Str }),
  plan_type: Str,
  network_type: Str,
  program_type: Str,
  status: enumOf(PLAN_STATUSES),
  care_categories: StrArr,
  coverage_area: Type.Object({ is_national: Type.Boolean(), states: Type.Union([StrArr, Type.Null()]) }),
  ref_metadata: Type.Object({ created_timestamp_utc: Str, last_updated_timestamp_utc: Str }),
});

export const PlanType = enumOf(PLAN_TYPES);
export const ProgramType = enumOf(PROGRAM_TYPES);
export const PlanStatus = enumOf(PLAN_STATUSES);

export const InsuranceMappings = Type.Object({
  insurance_plan_mappings: Type.Array(Type.Object({ insurance_plan_id: Str })),
  eligible_insurances: Type.Array(
    Type.Object({
      insurance_carrier_id: Str,
      insurance_carrier_networks: Type.Array(Type.Object({ program_type: Str, network_type: Str, insurance_plan_ids: StrArr })),
    }),
  ),
});

export const Facility = Type.Object({
  facility_id: Str,
  name: Str,
  npi: OptStr,
  building_type: enumOf(['clinic', 'hospital'] as const),
  specialties: StrArr,
  languages: StrArr,
  visit_reason_ids: StrArr,
  default_visit_reason_id: OptStr,
  // In-person locations carry the address; virtual ones only state, name and zone.
  location: Type.Object({
    address1: OptStr,
    address2: OptStr,
    city: OptStr,
    state: Str,
    zip_code: OptStr,
    latitude: Type.Optional(Type.Number()),
    longitude: Type.Optional(Type.Number()),
    location_name: OptStr,
    phone_number: OptStr,
    phone_extension: OptStr,
    time_zone: Str,
    distance_to_patient_mi: Type.Optional(Type.Number()),
  }),
  schedule: Type.Object({ schedule_id: Str, provider_location_id: Str, booking_requirements: BookingRequirements }),
  practice: Practice,
});

/** `max_distance_to_patient_mi`: default 50 miles, at most 500. */
export const MaxDistance = Type.Number({ exclusiveMinimum: 0, maximum: 500, default: 50 });
/** A 5-digit ZIP code. */
export const ZipCode = Type.String({ pattern: '^[0-9]{5}$' });
