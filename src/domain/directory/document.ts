/**
 * The directory document: what `directory import` reads and `directory seed` generates
 * (docs/directory-format.md). Ids are the directory's own stable ids; re-importing updates rows.
 */
export interface WeeklyScheduleBlock {
  /** ISO weekday: 1 = Monday … 7 = Sunday. */
  weekday: number;
  /** Local wall-clock `HH:MM` in the location's zone. */
  start: string;
  end: string;
  visit_reason_ids?: string[];
  patient_type?: 'new' | 'existing';
}

export interface DirectoryDocument {
  practices?: { id: string; name: string; insurance_managed_at_practice?: boolean; insurance_plan_ids?: string[] }[];
  specialties?: { id: string; name: string; care_category: 'health' | 'dental' | 'vision'; default_visit_reason_id: string }[];
  visit_reasons?: { id: string; name: string; specialty_id: string; duration_minutes: { new: number; existing: number } }[];
  insurance_carriers?: { id: string; name: string }[];
  insurance_plans?: {
    id: string;
    carrier_id: string;
    name: string;
    plan_type: string;
    program_type: string;
    status?: 'inactive' | 'active' | 'deleted';
    care_categories: string[];
    coverage_area: { is_national: boolean; states: string[] | null };
  }[];
  providers?: {
    id: string;
    npi: string;
    practice_id: string;
    first_name: string;
    last_name: string;
    title?: string;
    gender_identity?: string;
    statement?: string;
    photo_url?: string;
    languages?: string[];
    certifications?: string[];
    education_institutions?: string[];
    main_specialty_id?: string;
    specialty_ids?: string[];
    default_visit_reason_id?: string;
    visit_reason_ids?: string[];
  }[];
  locations?: {
    id: string;
    is_virtual?: boolean;
    location_name?: string;
    address1?: string;
    address2?: string;
    city?: string;
    state: string;
    zip_code?: string;
    latitude?: number;
    longitude?: number;
    time_zone: string;
    phone_number?: string;
    phone_extension?: string;
  }[];
  provider_locations?: {
    provider_id: string;
    location_id: string;
    provider_location_type?: 'in_person_provider' | 'virtual_provider';
    visit_type?: 'in_person' | 'platform_video_service' | 'third_party_video_service';
    confirmation_type?: 'auto' | 'manual';
    required_fields?: string[];
    accepts_booking_requests_from?: string[];
    is_provider_resource?: boolean;
    active?: boolean;
    insurance_plan_ids?: string[];
    weekly_schedule?: WeeklyScheduleBlock[];
  }[];
  facilities?: { id: string; name: string; npi?: string; building_type: 'clinic' | 'hospital'; provider_location_id: string }[];
}

/** A provider-location id: the provider id and the location id joined by a pipe (docs/api/conventions.md#identifiers). */
export const providerLocationId = (providerId: string, locationId: string): string => `${providerId}|${locationId}`;
