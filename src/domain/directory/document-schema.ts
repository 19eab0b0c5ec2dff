/**
 * The JSON Schema of the directory document (docs/directory-format.md, docs/directory.schema.json):
 * one schema per record kind, and the whole JSON document. `DirectoryDocument` (document.ts) is the
 * TypeScript view of the same shape. Constraints mirror the database's checks and docs/api/conventions.md#identifiers
 * identifier shapes, so a document that validates here writes without a constraint error.
 */
import { Type, type TSchema } from 'typebox';
import { CARE_CATEGORIES, PLAN_STATUSES, PLAN_TYPES, PROGRAM_TYPES } from './insurance-plans.js';

const strEnum = (values: readonly string[], description?: string) =>
  Type.String({ enum: [...values], ...(description ? { description } : {}) });
const id = (prefix: string | undefined, description: string) =>
  Type.String({ minLength: 1, maxLength: 200, ...(prefix ? { pattern: `^${prefix}_[^|]+$` } : { pattern: '^[^|]+$' }), description });
const text = (max: number, description?: string) => Type.String({ minLength: 1, maxLength: max, ...(description ? { description } : {}) });
const opt = <T extends TSchema>(s: T) => Type.Optional(s);
const closed = { additionalProperties: false };
const HHMM = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'Local wall-clock time HH:MM in the location zone' });

export const PracticeRecord = Type.Object(
  {
    id: id('pt', 'Practice id, pt_<id>'),
    name: text(200),
    insurance_managed_at_practice: opt(Type.Boolean({ description: 'When true, the practice-level plan list applies to every provider-location of the practice, and insurance-mapping requests answer 409' })),
    insurance_plan_ids: opt(Type.Array(id('ip', 'Insurance plan id'), { maxItems: 5000, description: 'Practice-level plans (replaces the stored list when given)' })),
  },
  closed,
);

export const SpecialtyRecord = Type.Object(
  {
    id: id('sp', 'Specialty id, sp_<id>'),
    name: text(200),
    care_category: strEnum(CARE_CATEGORIES),
    default_visit_reason_id: id('pc', 'Visit reason id, pc_<id>'),
  },
  closed,
);

export const VisitReasonRecord = Type.Object(
  {
    id: id('pc', 'Visit reason id, pc_<id>'),
    name: text(200),
    specialty_id: id('sp', 'Specialty id'),
    duration_minutes: Type.Object(
      {
        new: Type.Integer({ minimum: 5, maximum: 480, description: 'Slot length for new patients' }),
        existing: Type.Integer({ minimum: 5, maximum: 480, description: 'Slot length for existing patients' }),
      },
      closed,
    ),
  },
  closed,
);

export const InsuranceCarrierRecord = Type.Object({ id: id(undefined, 'Carrier id'), name: text(200) }, closed);

export const InsurancePlanRecord = Type.Object(
  {
    id: id('ip', 'Insurance plan id, ip_<id>'),
    carrier_id: id(undefined, 'Carrier id'),
    name: text(200),
    plan_type: strEnum(PLAN_TYPES, 'Served as plan_type and network_type'),
    program_type: strEnum(PROGRAM_TYPES),
    status: opt(strEnum(PLAN_STATUSES, 'Default active')),
    care_categories: Type.Array(strEnum(CARE_CATEGORIES), { minItems: 1, maxItems: 3 }),
    coverage_area: Type.Object(
      {
        is_national: Type.Boolean(),
        states: Type.Union([Type.Array(Type.String({ pattern: '^[A-Z]{2}$' }), { maxItems: 60 }), Type.Null()], {
          description: 'Two-letter codes; null (or ignored) when is_national',
        }),
      },
      closed,
    ),
  },
  closed,
);

export const ProviderRecord = Type.Object(
  {
    id: id('pr', 'Provider id, pr_<id>'),
    npi: Type.String({ pattern: '^[12][0-9]{9}$', description: '10-digit NPI with a valid check digit' }),
    practice_id: id('pt', 'Practice id'),
    first_name: text(50),
    last_name: text(50),
    title: opt(text(50)),
    gender_identity: opt(text(50, 'e.g. Female, Male, Non-binary')),
    statement: opt(Type.String({ maxLength: 5000 })),
    photo_url: opt(Type.String({ maxLength: 2000, pattern: '^https?://' })),
    languages: opt(Type.Array(text(50), { maxItems: 50 })),
    certifications: opt(Type.Array(text(200), { maxItems: 50 })),
    education_institutions: opt(Type.Array(text(200), { maxItems: 50 })),
    main_specialty_id: opt(id('sp', 'Specialty id')),
    specialty_ids: opt(Type.Array(id('sp', 'Specialty id'), { maxItems: 50 })),
    default_visit_reason_id: opt(id('pc', 'Visit reason id')),
    visit_reason_ids: opt(Type.Array(id('pc', 'Visit reason id'), { maxItems: 200 })),
  },
  closed,
);

export const LocationRecord = Type.Object(
  {
    id: id('lo', 'Location id, lo_<id>'),
    is_virtual: opt(Type.Boolean({ description: 'Virtual locations need only state, time_zone and a name' })),
    location_name: opt(text(200)),
    address1: opt(text(50)),
    address2: opt(Type.String({ maxLength: 20 })),
    city: opt(text(50)),
    state: Type.String({ pattern: '^[A-Z]{2}$' }),
    zip_code: opt(Type.String({ pattern: '^[0-9]{5}$' })),
    latitude: opt(Type.Number({ minimum: -90, maximum: 90 })),
    longitude: opt(Type.Number({ minimum: -180, maximum: 180 })),
    time_zone: text(64, 'IANA zone, e.g. America/New_York'),
    phone_number: opt(Type.String({ pattern: '^[0-9]{10}$' })),
    phone_extension: opt(Type.String({ pattern: '^[0-9]{1,10}$' })),
  },
  closed,
);

export const WeeklyScheduleBlockRecord = Type.Object(
  {
    weekday: Type.Integer({ minimum: 1, maximum: 7, description: 'ISO weekday: 1 = Monday … 7 = Sunday' }),
    start: HHMM,
    end: HHMM,
    visit_reason_ids: opt(Type.Array(id('pc', 'Visit reason id'), { maxItems: 200, description: 'Default: every visit reason of the provider' })),
    patient_type: opt(strEnum(['new', 'existing'], 'Default: both')),
  },
  closed,
);

export const ProviderLocationRecord = Type.Object(
  {
    provider_id: id('pr', 'Provider id'),
    location_id: id('lo', 'Location id'),
    provider_location_type: opt(strEnum(['in_person_provider', 'virtual_provider'])),
    visit_type: opt(strEnum(['in_person', 'platform_video_service', 'third_party_video_service'])),
    confirmation_type: opt(strEnum(['auto', 'manual'])),
    required_fields: opt(Type.Array(text(100), { maxItems: 50 })),
    accepts_booking_requests_from: opt(Type.Array(strEnum(['in_network', 'out_of_network', 'self_pay']), { maxItems: 3 })),
    is_provider_resource: opt(Type.Boolean()),
    active: opt(Type.Boolean({ description: 'false deactivates (reported as removed in the change summary)' })),
    insurance_plan_ids: opt(Type.Array(id('ip', 'Insurance plan id'), { maxItems: 5000, description: 'Replaces the stored list when given' })),
    weekly_schedule: opt(Type.Array(WeeklyScheduleBlockRecord, { maxItems: 500, description: 'Replaces the stored schedule when given' })),
  },
  closed,
);

export const FacilityRecord = Type.Object(
  {
    id: id(undefined, 'Facility id'),
    name: text(200),
    npi: opt(Type.String({ pattern: '^[12][0-9]{9}$' })),
    building_type: strEnum(['clinic', 'hospital']),
    provider_location_id: Type.String({ pattern: '^pr_[^|]+\\|lo_[^|]+$', description: 'The provider-location that holds its schedule' }),
  },
  closed,
);

/** Record kinds: the JSON document's section name and the NDJSON `type` value. */
export const SECTIONS = {
  practices: { type: 'practice', schema: PracticeRecord },
  specialties: { type: 'specialty', schema: SpecialtyRecord },
  visit_reasons: { type: 'visit_reason', schema: VisitReasonRecord },
  insurance_carriers: { type: 'insurance_carrier', schema: InsuranceCarrierRecord },
  insurance_plans: { type: 'insurance_plan', schema: InsurancePlanRecord },
  providers: { type: 'provider', schema: ProviderRecord },
  locations: { type: 'location', schema: LocationRecord },
  provider_locations: { type: 'provider_location', schema: ProviderLocationRecord },
  facilities: { type: 'facility', schema: FacilityRecord },
} as const;

export type Section = keyof typeof SECTIONS;
export const SECTION_NAMES = Object.keys(SECTIONS) as Section[];

/** The JSON document: every section optional, nothing else allowed. */
export const DirectoryDocumentSchema = Type.Object(
  Object.fromEntries(SECTION_NAMES.map((s) => [s, Type.Optional(Type.Array(SECTIONS[s].schema))])) as {
    [K in Section]: ReturnType<typeof Type.Optional<ReturnType<typeof Type.Array<(typeof SECTIONS)[K]['schema']>>>>;
  },
  { additionalProperties: false },
);

/** docs/directory.schema.json: the document schema with its draft and title. */
export function directoryJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://carebook.example/schemas/directory.schema.json',
    title: 'Carebook directory document',
    description:
      'The JSON form of a directory import (docs/directory-format.md). The NDJSON form has one record per line, each one ' +
      'of the section record schemas below plus a "type" member naming its kind (practice, specialty, visit_reason, ' +
      'insurance_carrier, insurance_plan, provider, location, provider_location, facility).',
    ...(JSON.parse(JSON.stringify(DirectoryDocumentSchema)) as Record<string, unknown>),
  };
}
