/** Kysely table types; they mirror `migrations/`. */
import type { ColumnType, Generated } from 'kysely';

export type Env = 'sandbox' | 'production';
/** A timestamptz: read as Date, written as Date or ISO string; defaulted by the database. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** A column with a database default: optional on insert. */
type Defaulted<T> = ColumnType<T, T | undefined, T>;

export interface DevelopersTable {
  id: string;
  env: Env;
  name: string;
  rate_limit_per_minute: number | null;
  created_at: Timestamp;
}

export interface OauthClientsTable {
  client_id: string;
  env: Env;
  developer_id: string;
  kind: 'confidential' | 'public';
  secret_hash: string | null;
  scopes: string[];
  redirect_uris: Defaulted<string[]>;
  created_at: Timestamp;
  secret_rotated_at: NullableTimestamp;
  /** The app holding this client (migration 0018); null for first-party clients of system developers. */
  app_id: string | null;
  /** The secret before the last rotation, accepted until `previous_secret_expires_at` (hash only). */
  previous_secret_hash: string | null;
  previous_secret_expires_at: NullableTimestamp;
  /** Set when the client is revoked: no more tokens. */
  revoked_at: NullableTimestamp;
  /** True while nobody has seen the secret: the first console read replaces it and shows the new one. */
  secret_reveal_pending: Defaulted<boolean>;
}

export interface UsersTable {
  id: string;
  env: Env;
  email: string;
  password_hash: string;
  role: UserRole;
  provider_id: string | null;
  created_at: Timestamp;
}

/** A login's role: patients and provider users of developers' apps, practice staff, console accounts (migration 0018). */
export type UserRole = 'patient' | 'provider' | 'staff' | 'developer';

/** A console account's ownership of a developer account (docs/decisions/0015-developer-console.md). */
export interface DeveloperMembersTable {
  user_id: string;
  developer_id: string;
  role: 'owner';
  created_at: Timestamp;
}

/** A named pair of clients of a developer (migration 0018). */
export interface AppsTable {
  id: string;
  env: Env;
  developer_id: string;
  name: string;
  created_at: Timestamp;
}

/** A console account's request for production access and the operator's decision. */
export interface ProductionRequestsTable {
  id: string;
  env: Env;
  user_id: string;
  sandbox_developer_id: string;
  company: string;
  use_case: string;
  status: Defaulted<'pending' | 'granted' | 'refused'>;
  created_at: Timestamp;
  decided_at: NullableTimestamp;
  production_developer_id: string | null;
  /** Why the operator refused the request (migration 0020). */
  refusal_reason: Defaulted<string | null>;
  /** Where the account signs in to its production console, when the grant went to another database (migration 0020). */
  production_console_url: Defaulted<string | null>;
}

/** A staff login of a practice (docs/decisions/0014-practice-workspace.md). */
export interface PracticeMembersTable {
  env: Env;
  practice_id: string;
  user_id: string;
  role: PracticeRole;
  created_at: Timestamp;
  created_by_user_id: string | null;
}

export type PracticeRole = 'practice_admin' | 'practice_staff';

/** A one-time invitation to a practice (migration 0014): the token's hash only. */
export interface PracticeInvitationsTable {
  token_hash: string;
  env: Env;
  practice_id: string;
  email: string;
  role: PracticeRole;
  created_at: Timestamp;
  created_by_user_id: string | null;
  expires_at: Timestamp;
  accepted_at: NullableTimestamp;
  user_id: string | null;
}

export interface SigningKeysTable {
  kid: string;
  env: Env;
  alg: string;
  private_jwk: unknown;
  public_jwk: unknown;
  created_at: Timestamp;
  retired_at: NullableTimestamp;
}

export interface TokenFamiliesTable {
  id: string;
  env: Env;
  client_id: string;
  user_id: string | null;
  scopes: string[];
  created_at: Timestamp;
  absolute_expires_at: Timestamp;
  revoked_at: NullableTimestamp;
  /** The anonymous session (`sub` of an anonymous token) linked at sign-in, if any. */
  anonymous_subject: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface AuthorizationCodesTable {
  code_hash: string;
  env: Env;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  code_challenge: string;
  scopes: string[];
  family_id: string;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

export interface RefreshTokensTable {
  token_hash: string;
  family_id: string;
  created_at: Timestamp;
  idle_expires_at: Timestamp;
  used_at: NullableTimestamp;
}

export interface AuthorizationRequestsTable {
  id_hash: string;
  env: Env;
  client_id: string;
  redirect_uri: string;
  scopes: string[];
  state: string | null;
  code_challenge: string;
  login_hint: string | null;
  anonymous_subject: string | null;
  browser_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  completed_at: NullableTimestamp;
}

export interface AuthRateLimitsTable {
  bucket: string;
  hits: number;
  window_ends_at: Timestamp;
}

export interface LoginSessionsTable {
  id_hash: string;
  env: Env;
  user_id: string;
  anonymous_subject: string | null;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
}

export interface PracticesTable {
  env: Env;
  id: string;
  name: string;
  insurance_managed_at_practice: Defaulted<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SpecialtiesTable {
  env: Env;
  id: string;
  name: string;
  care_category: 'health' | 'dental' | 'vision';
  default_visit_reason_id: string;
}

export interface VisitReasonsTable {
  env: Env;
  id: string;
  name: string;
  specialty_id: string;
  duration_new_minutes: number;
  duration_existing_minutes: number;
}

export interface ProvidersTable {
  env: Env;
  id: string;
  npi: string;
  practice_id: string;
  first_name: string;
  last_name: string;
  title: string | null;
  gender_identity: string | null;
  statement: string | null;
  photo_url: string | null;
  languages: Defaulted<string[]>;
  certifications: Defaulted<string[]>;
  education_institutions: Defaulted<string[]>;
  main_specialty_id: string | null;
  specialty_ids: Defaulted<string[]>;
  default_visit_reason_id: string | null;
  visit_reason_ids: Defaulted<string[]>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface LocationsTable {
  env: Env;
  id: string;
  is_virtual: Defaulted<boolean>;
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
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type ConfirmationType = 'auto' | 'manual' | 'pending_evaluation';
export type VisitType = 'in_person' | 'platform_video_service' | 'third_party_video_service';

export interface ProviderLocationsTable {
  env: Env;
  id: string;
  provider_id: string;
  location_id: string;
  provider_location_type: 'in_person_provider' | 'virtual_provider';
  visit_type: Defaulted<VisitType>;
  confirmation_type: Defaulted<ConfirmationType>;
  required_fields: Defaulted<string[]>;
  accepts_booking_requests_from: Defaulted<string[]>;
  is_provider_resource: Defaulted<boolean>;
  active: Defaulted<boolean>;
  go_live_at: Timestamp;
  profile_updated_at: Timestamp;
  deactivated_at: NullableTimestamp;
}

export interface DeveloperProviderLocationsTable {
  env: Env;
  developer_id: string;
  provider_location_id: string;
  added_at: Timestamp;
  /** A copy of the provider-location's `active`, set and kept by triggers (migration 0008): never written. */
  active: Defaulted<boolean>;
  /** A copy of the NPI of the provider-location's provider, set and kept by triggers (migration 0027): never written. */
  npi: ColumnType<string | null, never, never>;
}

/**
 * Derived search rows (migration 0008): one per active provider-location per term (`sp:<specialty
 * id>`, `vr:<visit reason id>`), refreshed by `writeDirectory`.
 */
export interface ProviderLocationSearchTable {
  env: Env;
  term: string;
  provider_location_id: string;
  /** The location is virtual or the provider-location is a virtual provider. */
  is_virtual: boolean;
  state: string;
  latitude: number | null;
  longitude: number | null;
}

/**
 * Stored availability summaries (migration 0009): one row per provider-location, written by the
 * refresher (src/domain/availability/summary-store.ts), served by listings while younger than 60 s.
 */
export interface AvailabilitySummariesTable {
  env: Env;
  provider_location_id: string;
  /** The "now" the summary was computed for. */
  computed_at: ColumnType<Date, Date | string, Date | string>;
  /** ISO-8601 UTC exactly as served (`next_available_utc`); null: none within 90 days. */
  new_next_available_utc: string | null;
  new_next_28_days: 'none' | 'limited' | 'available';
  existing_next_available_utc: string | null;
  existing_next_28_days: 'none' | 'limited' | 'available';
  /** `YYYY-MM-DD` in the provider's zone (a date, read as text). */
  first_availability_date: string | null;
  default_visit_reason_id: string | null;
}

/**
 * Versions of what a booking is checked against (migration 0010; kept by triggers): the directory's
 * (one row) and each provider's calendar. `bigint`: read as text by the drivers.
 */
export interface DirectoryVersionTable {
  id: ColumnType<boolean, boolean | undefined, never>;
  version: ColumnType<string, string | number, string | number>;
}

/** A background pass's lease (migration 0029; src/db/leases.ts): one row per pass name while held or until it expires. */
export interface JobLeasesTable {
  name: string;
  holder: string;
  expires_at: ColumnType<Date, Date | string, Date | string>;
}

export interface CalendarVersionsTable {
  env: Env;
  provider_id: string;
  version: ColumnType<string, string | number, string | number>;
}

export interface DirectoryChangesTable {
  id: Generated<string>;
  env: Env;
  provider_location_id: string;
  change: 'added' | 'removed' | 'profile_updated';
  changed_at: Timestamp;
}

/**
 * A developer's share of `directory_changes` (migration 0024, kept by a trigger): one row per change of a
 * provider-location already in that developer's directory, for the 72-hour summary's candidates.
 */
export interface DeveloperDirectoryChangesTable {
  env: Env;
  developer_id: string;
  provider_location_id: string;
  changed_at: Timestamp;
}

export interface InsuranceCarriersTable {
  env: Env;
  id: string;
  name: string;
}

export interface InsurancePlansTable {
  env: Env;
  id: string;
  carrier_id: string;
  name: string;
  plan_type: string;
  program_type: string;
  status: Defaulted<'inactive' | 'active' | 'deleted'>;
  care_categories: string[];
  is_national: boolean;
  states: string[] | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ProviderLocationInsurancePlansTable {
  env: Env;
  provider_location_id: string;
  insurance_plan_id: string;
}

export interface PracticeInsurancePlansTable {
  env: Env;
  practice_id: string;
  insurance_plan_id: string;
}

export interface FacilitiesTable {
  env: Env;
  id: string;
  name: string;
  npi: string | null;
  building_type: 'clinic' | 'hospital';
  provider_location_id: string;
  /** The location's coordinates (null when virtual), kept by triggers (migration 0021). */
  latitude: ColumnType<number | null, never, never>;
  longitude: ColumnType<number | null, never, never>;
}

/** Active provider-locations per developer's directory, kept by triggers (migration 0021). */
export interface DeveloperDirectorySizesTable {
  env: Env;
  developer_id: string;
  active_count: ColumnType<string, never, never>;
}

export interface WeeklySchedulesTable {
  id: Generated<string>;
  env: Env;
  provider_location_id: string;
  /** ISO weekday, 1 = Monday … 7 = Sunday. */
  weekday: number;
  /** Local wall-clock time `HH:MM[:SS]` in the location's zone. */
  start_local: string;
  end_local: string;
  visit_reason_ids: string[] | null;
  patient_type: 'new' | 'existing' | null;
}

/** Time off of a provider (every location) or one provider-location (migration 0015; docs/scheduling.md). */
export interface TimeOffTable {
  id: string;
  env: Env;
  practice_id: string;
  provider_id: string;
  /** Null: every location of the provider. */
  provider_location_id: string | null;
  /** Local dates in the location's zone, inclusive. */
  start_date: ColumnType<string, string, string>;
  end_date: ColumnType<string, string, string>;
  /** Local `HH:MM[:SS]` on `start_date` (null: from midnight) and on `end_date` (null: to the end of the day). */
  start_local: string | null;
  end_local: string | null;
  note: string | null;
  created_by_user_id: string | null;
  created_at: Timestamp;
}

/**
 * A practice's override of one visit reason at one provider-location (migration 0023;
 * docs/decisions/0019-practice-visit-reasons.md): offered there or not, and durations per patient
 * type (null: the directory's).
 */
export interface ProviderLocationVisitReasonsTable {
  env: Env;
  provider_location_id: string;
  visit_reason_id: string;
  offered: Generated<boolean>;
  duration_new_minutes: number | null;
  duration_existing_minutes: number | null;
  updated_by_user_id: string | null;
  updated_at: Generated<Timestamp>;
}

/** Who changed which schedule of a practice (migration 0023): ids only. */
export interface PracticeAuditLogTable {
  id: Generated<string>;
  env: Env;
  practice_id: string;
  actor_kind: 'staff' | 'operator';
  actor_user_id: string | null;
  action: string;
  provider_id: string | null;
  provider_location_id: string | null;
  subject_id: string | null;
  request_id: string | null;
  at: Generated<Timestamp>;
}

export interface CalendarTimeslotsTable {
  id: string;
  env: Env;
  provider_id: string;
  location_id: string;
  local_date: ColumnType<string, string, string>;
  start_local: ColumnType<string, string, string>;
  time_zone: string;
  start_utc: Timestamp;
  allowed_visit_reason_ids: string[] | null;
  excluded_visit_reason_ids: string[] | null;
  patient_type: 'new' | 'existing' | null;
  created_at: Timestamp;
}

export interface PatientsTable {
  id: string;
  env: Env;
  developer_id: string;
  created_by_user_id: string | null;
  developer_patient_id: string | null;
  first_name: string;
  last_name: string;
  date_of_birth: ColumnType<string, string, string>;
  sex_at_birth: 'male' | 'female';
  phone_number: string;
  email_address: string;
  address: unknown;
  insurance: unknown;
  gender: string[] | null;
  created_at: Timestamp;
}

export type AppointmentStatus =
  | 'pending_booking'
  | 'confirmed'
  | 'booking_failed'
  | 'cancelled'
  | 'no_show'
  | 'pending_reschedule'
  | 'rescheduled'
  | 'reschedule_failed';

export interface AppointmentsTable {
  id: string;
  env: Env;
  developer_id: string;
  booked_by_client_id: string;
  booked_by_user_id: string | null;
  patient_id: string;
  developer_patient_id: string | null;
  provider_location_id: string;
  provider_id: string;
  location_id: string;
  practice_id: string | null;
  visit_reason_id: string;
  patient_type: 'new' | 'existing';
  start_time: Timestamp;
  end_time: Timestamp;
  time_zone: string;
  pending_start_time: NullableTimestamp;
  pending_end_time: NullableTimestamp;
  appointment_status: AppointmentStatus;
  confirmation_type: ConfirmationType;
  visit_type: VisitType;
  is_provider_resource: Defaulted<boolean>;
  notes: string | null;
  cancellation_reason: string | null;
  cancellation_reason_type: string | null;
  arrived_at: NullableTimestamp;
  evaluate_after: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AppointmentHoldsTable {
  appointment_id: string;
  kind: 'current' | 'pending';
  env: Env;
  provider_id: string;
  /** A PostgreSQL tstzrange literal, e.g. `[2026-01-01T10:00Z,2026-01-01T10:30Z)`. */
  during: string;
}

export interface AttachmentsTable {
  id: string;
  env: Env;
  developer_id: string;
  appointment_id: string;
  attachment_type: 'community_care_packet' | 'pcp_patient_referral';
  content_type: string;
  size_bytes: number;
  sha256: string;
  /** The bytes when the database keeps them (PostgreSQL, rows before migration 0022); null when the file store does (docs/decisions/0016-attachment-files.md). */
  content: Uint8Array | null;
  created_at: Timestamp;
}

export interface WebhookEndpointsTable {
  developer_id: string;
  env: Env;
  url: string;
  /** The current signing key (base64). */
  key: string;
  /** The key replaced last, still signing until `previous_key_expires_at` (docs/api/webhooks.md#registering-a-receiver). */
  previous_key: string | null;
  previous_key_expires_at: NullableTimestamp;
  updated_at: Timestamp;
}

export interface OutboxEventsTable {
  id: string;
  env: Env;
  developer_id: string;
  appointment_id: string;
  update_type: 'created' | 'updated' | 'cancelled';
  /** jsonb `[{attribute_path, attachment_type?}]`; written as a JSON string (docs/api/webhooks.md#event-body). */
  changed_attributes: ColumnType<{ attribute_path: string; attachment_type?: string }[], string | undefined, string>;
  occurred_at: Timestamp;
  /** `skipped`: the developer's own call made the change; `no_endpoint`: no receiver was registered (replayable). */
  status: Defaulted<'pending' | 'delivered' | 'failed' | 'skipped' | 'no_endpoint'>;
  attempts: Defaulted<number>;
  next_attempt_at: Timestamp;
  locked_until: NullableTimestamp;
  delivered_at: NullableTimestamp;
  last_error: string | null;
  /** Start of the 48-hour retry window: the replay time, or null for the occurrence time. */
  retry_from: NullableTimestamp;
  /** `test`: a console test event (no appointment; `appointment_id` is empty); migration 0019. */
  kind: Defaulted<'appointment' | 'test'>;
}

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  env: Env;
  developer_id: string;
  event_id: string;
  attempt: number;
  url: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  attempted_at: Timestamp;
  /** The first bytes (at most 256) of the receiver's answer (migration 0019); never the request body. */
  response_excerpt: ColumnType<string | null, string | null | undefined, string | null>;
  /** The receiver's address was private: its answer is not shown to the developer (migration 0019). */
  answer_withheld: Defaulted<boolean>;
}

export interface IdempotencyKeysTable {
  env: Env;
  developer_id: string;
  principal: string;
  key: string;
  method: string;
  path: string;
  request_hash: string;
  status_code: number | null;
  response_body: unknown;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface InsuranceMappingRequestsTable {
  id: string;
  env: Env;
  developer_id: string;
  provider_location_id: string;
  operation: 'Add' | 'Remove' | 'Replace';
  insurance_plan_ids: string[];
  status: Defaulted<'pending' | 'applied' | 'failed'>;
  created_at: Timestamp;
  applied_at: NullableTimestamp;
  error: string | null;
}

/** One API call of a developer's credential (docs/api/request-log.md). */
export interface RequestLogTable {
  id: Generated<string>;
  env: Env;
  developer_id: string;
  client_id: string;
  at: Timestamp;
  method: string;
  path: string;
  status: number;
  latency_ms: number;
  request_id: string;
  /** The error body of a refused call; null for a success. */
  error: ColumnType<unknown, string | null, string | null>;
}

/** Requests and errors of one client on one UTC day (migration 0019; docs/console.md, "Usage"). */
export interface UsageDailyTable {
  env: Env;
  developer_id: string;
  client_id: string;
  day: ColumnType<string, string, string>;
  requests: number;
  errors: number;
}

export interface AuditLogTable {
  id: Generated<string>;
  env: Env;
  developer_id: string;
  actor_client_id: string | null;
  actor_user_id: string | null;
  actor_kind: 'client' | 'user' | 'operator' | 'service' | 'staff';
  appointment_id: string;
  action: string;
  request_id: string | null;
  at: Timestamp;
}

export interface Database {
  developers: DevelopersTable;
  oauth_clients: OauthClientsTable;
  users: UsersTable;
  practice_members: PracticeMembersTable;
  developer_members: DeveloperMembersTable;
  apps: AppsTable;
  production_requests: ProductionRequestsTable;
  request_log: RequestLogTable;
  usage_daily: UsageDailyTable;
  practice_invitations: PracticeInvitationsTable;
  signing_keys: SigningKeysTable;
  token_families: TokenFamiliesTable;
  authorization_codes: AuthorizationCodesTable;
  refresh_tokens: RefreshTokensTable;
  login_sessions: LoginSessionsTable;
  authorization_requests: AuthorizationRequestsTable;
  auth_rate_limits: AuthRateLimitsTable;
  practices: PracticesTable;
  specialties: SpecialtiesTable;
  visit_reasons: VisitReasonsTable;
  providers: ProvidersTable;
  locations: LocationsTable;
  provider_locations: ProviderLocationsTable;
  developer_provider_locations: DeveloperProviderLocationsTable;
  provider_location_search: ProviderLocationSearchTable;
  availability_summaries: AvailabilitySummariesTable;
  directory_changes: DirectoryChangesTable;
  developer_directory_changes: DeveloperDirectoryChangesTable;
  directory_version: DirectoryVersionTable;
  calendar_versions: CalendarVersionsTable;
  job_leases: JobLeasesTable;
  insurance_carriers: InsuranceCarriersTable;
  insurance_plans: InsurancePlansTable;
  provider_location_insurance_plans: ProviderLocationInsurancePlansTable;
  practice_insurance_plans: PracticeInsurancePlansTable;
  facilities: FacilitiesTable;
  developer_directory_sizes: DeveloperDirectorySizesTable;
  weekly_schedules: WeeklySchedulesTable;
  calendar_timeslots: CalendarTimeslotsTable;
  time_off: TimeOffTable;
  provider_location_visit_reasons: ProviderLocationVisitReasonsTable;
  practice_audit_log: PracticeAuditLogTable;
  patients: PatientsTable;
  appointments: AppointmentsTable;
  appointment_holds: AppointmentHoldsTable;
  attachments: AttachmentsTable;
  webhook_endpoints: WebhookEndpointsTable;
  outbox_events: OutboxEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  idempotency_keys: IdempotencyKeysTable;
  insurance_mapping_requests: InsuranceMappingRequestsTable;
  audit_log: AuditLogTable;
}
