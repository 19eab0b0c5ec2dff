/**
 * Initial schema. Migrations import nothing from the application: only Kysely, so that they stay
 * valid as the code around them changes.
 *
 * Conventions:
 * - `env` ('sandbox' | 'production') is on every row that belongs to an environment; directory rows
 *   are keyed by (env, id), tenant rows also carry `developer_id`, so a query cannot forget either.
 * - Times are `timestamptz`; local wall-clock times (weekly schedules, calendar slots) are kept as
 *   local values plus the IANA zone, and converted with a time-zone library, never by hand.
 * - Double booking is refused by the database: `appointment_holds` has an exclusion constraint over
 *   each provider's live time ranges (btree_gist).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE EXTENSION IF NOT EXISTS btree_gist`.execute(db);

  await sql`
    CREATE TABLE developers (
      id text PRIMARY KEY,
      env text NOT NULL CHECK (env IN ('sandbox', 'production')),
      name text NOT NULL,
      rate_limit_per_minute integer,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE oauth_clients (
      client_id text PRIMARY KEY,
      env text NOT NULL,
      developer_id text NOT NULL REFERENCES developers(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('confidential', 'public')),
      secret_hash text,
      scopes text[] NOT NULL,
      redirect_uris text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      secret_rotated_at timestamptz,
      CHECK ((kind = 'confidential') = (secret_hash IS NOT NULL))
    )`.execute(db);
  await sql`CREATE INDEX oauth_clients_developer ON oauth_clients (developer_id)`.execute(db);

  await sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      env text NOT NULL,
      email text NOT NULL,
      password_hash text NOT NULL,
      role text NOT NULL CHECK (role IN ('patient', 'provider')),
      provider_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((role = 'provider') = (provider_id IS NOT NULL))
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX users_env_email ON users (env, lower(email))`.execute(db);

  // --- OAuth server state -------------------------------------------------------------------
  await sql`
    CREATE TABLE signing_keys (
      kid text PRIMARY KEY,
      env text NOT NULL,
      alg text NOT NULL,
      private_jwk jsonb NOT NULL,
      public_jwk jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      retired_at timestamptz
    )`.execute(db);
  await sql`
    CREATE TABLE token_families (
      id text PRIMARY KEY,
      env text NOT NULL,
      client_id text NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,
      user_id text REFERENCES users(id) ON DELETE CASCADE,
      scopes text[] NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      absolute_expires_at timestamptz NOT NULL,
      revoked_at timestamptz
    )`.execute(db);
  await sql`
    CREATE TABLE authorization_codes (
      code_hash text PRIMARY KEY,
      env text NOT NULL,
      client_id text NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      redirect_uri text NOT NULL,
      code_challenge text NOT NULL,
      scopes text[] NOT NULL,
      family_id text NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`.execute(db);
  await sql`
    CREATE TABLE refresh_tokens (
      token_hash text PRIMARY KEY,
      family_id text NOT NULL REFERENCES token_families(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      idle_expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`.execute(db);
  await sql`
    CREATE TABLE login_sessions (
      id_hash text PRIMARY KEY,
      env text NOT NULL,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      anonymous_subject text,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_seen_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )`.execute(db);

  // --- Directory (per environment, shared by the network) -------------------------------------
  await sql`
    CREATE TABLE practices (
      env text NOT NULL,
      id text NOT NULL,
      name text NOT NULL,
      insurance_managed_at_practice boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (env, id)
    )`.execute(db);
  await sql`
    CREATE TABLE specialties (
      env text NOT NULL,
      id text NOT NULL,
      name text NOT NULL,
      care_category text NOT NULL CHECK (care_category IN ('health', 'dental', 'vision')),
      default_visit_reason_id text NOT NULL,
      PRIMARY KEY (env, id)
    )`.execute(db);
  await sql`
    CREATE TABLE visit_reasons (
      env text NOT NULL,
      id text NOT NULL,
      name text NOT NULL,
      specialty_id text NOT NULL,
      duration_new_minutes integer NOT NULL CHECK (duration_new_minutes BETWEEN 5 AND 480),
      duration_existing_minutes integer NOT NULL CHECK (duration_existing_minutes BETWEEN 5 AND 480),
      PRIMARY KEY (env, id),
      FOREIGN KEY (env, specialty_id) REFERENCES specialties(env, id)
    )`.execute(db);
  await sql`
    CREATE TABLE providers (
      env text NOT NULL,
      id text NOT NULL,
      npi text NOT NULL,
      practice_id text NOT NULL,
      first_name text NOT NULL,
      last_name text NOT NULL,
      title text,
      gender_identity text,
      statement text,
      photo_url text,
      languages text[] NOT NULL DEFAULT '{}',
      certifications text[] NOT NULL DEFAULT '{}',
      education_institutions text[] NOT NULL DEFAULT '{}',
      main_specialty_id text,
      specialty_ids text[] NOT NULL DEFAULT '{}',
      default_visit_reason_id text,
      visit_reason_ids text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (env, id),
      FOREIGN KEY (env, practice_id) REFERENCES practices(env, id)
    )`.execute(db);
  await sql`CREATE INDEX providers_npi ON providers (env, npi)`.execute(db);
  await sql`
    CREATE TABLE locations (
      env text NOT NULL,
      id text NOT NULL,
      is_virtual boolean NOT NULL DEFAULT false,
      location_name text,
      address1 text,
      address2 text,
      city text,
      state text NOT NULL CHECK (state ~ '^[A-Z]{2}$'),
      zip_code text CHECK (zip_code ~ '^[0-9]{5}$'),
      latitude double precision,
      longitude double precision,
      time_zone text NOT NULL,
      phone_number text CHECK (phone_number ~ '^[0-9]{10}$'),
      phone_extension text CHECK (phone_extension ~ '^[0-9]+$'),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (env, id),
      CHECK (is_virtual OR (address1 IS NOT NULL AND city IS NOT NULL AND zip_code IS NOT NULL
                            AND latitude IS NOT NULL AND longitude IS NOT NULL))
    )`.execute(db);
  await sql`CREATE INDEX locations_geo ON locations (env, latitude, longitude)`.execute(db);
  await sql`
    CREATE TABLE provider_locations (
      env text NOT NULL,
      id text NOT NULL,
      provider_id text NOT NULL,
      location_id text NOT NULL,
      provider_location_type text NOT NULL CHECK (provider_location_type IN ('in_person_provider', 'virtual_provider')),
      visit_type text NOT NULL DEFAULT 'in_person'
        CHECK (visit_type IN ('in_person', 'platform_video_service', 'third_party_video_service')),
      confirmation_type text NOT NULL DEFAULT 'auto' CHECK (confirmation_type IN ('auto', 'manual', 'pending_evaluation')),
      required_fields text[] NOT NULL DEFAULT '{}',
      accepts_booking_requests_from text[] NOT NULL DEFAULT '{in_network,out_of_network,self_pay}',
      is_provider_resource boolean NOT NULL DEFAULT false,
      active boolean NOT NULL DEFAULT true,
      go_live_at timestamptz NOT NULL DEFAULT now(),
      profile_updated_at timestamptz NOT NULL DEFAULT now(),
      deactivated_at timestamptz,
      PRIMARY KEY (env, id),
      UNIQUE (env, provider_id, location_id),
      FOREIGN KEY (env, provider_id) REFERENCES providers(env, id),
      FOREIGN KEY (env, location_id) REFERENCES locations(env, id)
    )`.execute(db);
  await sql`
    CREATE TABLE developer_provider_locations (
      env text NOT NULL,
      developer_id text NOT NULL REFERENCES developers(id) ON DELETE CASCADE,
      provider_location_id text NOT NULL,
      added_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (developer_id, provider_location_id),
      FOREIGN KEY (env, provider_location_id) REFERENCES provider_locations(env, id)
    )`.execute(db);
  await sql`
    CREATE TABLE directory_changes (
      id bigserial PRIMARY KEY,
      env text NOT NULL,
      provider_location_id text NOT NULL,
      change text NOT NULL CHECK (change IN ('added', 'removed', 'profile_updated')),
      changed_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX directory_changes_recent ON directory_changes (env, changed_at)`.execute(db);

  await sql`
    CREATE TABLE insurance_carriers (
      env text NOT NULL,
      id text NOT NULL,
      name text NOT NULL,
      PRIMARY KEY (env, id)
    )`.execute(db);
  await sql`
    CREATE TABLE insurance_plans (
      env text NOT NULL,
      id text NOT NULL,
      carrier_id text NOT NULL,
      name text NOT NULL,
      plan_type text NOT NULL,
      program_type text NOT NULL,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('inactive', 'active', 'deleted')),
      care_categories text[] NOT NULL,
      is_national boolean NOT NULL,
      states text[],
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (env, id),
      FOREIGN KEY (env, carrier_id) REFERENCES insurance_carriers(env, id)
    )`.execute(db);
  await sql`
    CREATE TABLE provider_location_insurance_plans (
      env text NOT NULL,
      provider_location_id text NOT NULL,
      insurance_plan_id text NOT NULL,
      PRIMARY KEY (env, provider_location_id, insurance_plan_id),
      FOREIGN KEY (env, provider_location_id) REFERENCES provider_locations(env, id),
      FOREIGN KEY (env, insurance_plan_id) REFERENCES insurance_plans(env, id)
    )`.execute(db);
  await sql`
    CREATE TABLE practice_insurance_plans (
      env text NOT NULL,
      practice_id text NOT NULL,
      insurance_plan_id text NOT NULL,
      PRIMARY KEY (env, practice_id, insurance_plan_id),
      FOREIGN KEY (env, practice_id) REFERENCES practices(env, id),
      FOREIGN KEY (env, insurance_plan_id) REFERENCES insurance_plans(env, id)
    )`.execute(db);
  await sql`
    CREATE TABLE facilities (
      env text NOT NULL,
      id text NOT NULL,
      name text NOT NULL,
      npi text,
      building_type text NOT NULL CHECK (building_type IN ('clinic', 'hospital')),
      provider_location_id text NOT NULL,
      PRIMARY KEY (env, id),
      FOREIGN KEY (env, provider_location_id) REFERENCES provider_locations(env, id)
    )`.execute(db);
  await sql`
    CREATE TABLE weekly_schedules (
      id bigserial PRIMARY KEY,
      env text NOT NULL,
      provider_location_id text NOT NULL,
      weekday smallint NOT NULL CHECK (weekday BETWEEN 1 AND 7),
      start_local time NOT NULL,
      end_local time NOT NULL CHECK (end_local > start_local),
      visit_reason_ids text[],
      patient_type text CHECK (patient_type IN ('new', 'existing')),
      FOREIGN KEY (env, provider_location_id) REFERENCES provider_locations(env, id)
    )`.execute(db);
  await sql`CREATE INDEX weekly_schedules_pl ON weekly_schedules (env, provider_location_id)`.execute(db);
  await sql`
    CREATE TABLE calendar_timeslots (
      id text PRIMARY KEY,
      env text NOT NULL,
      provider_id text NOT NULL,
      location_id text NOT NULL,
      local_date date NOT NULL,
      start_local timestamp NOT NULL,
      time_zone text NOT NULL,
      start_utc timestamptz NOT NULL,
      allowed_visit_reason_ids text[],
      excluded_visit_reason_ids text[],
      patient_type text CHECK (patient_type IN ('new', 'existing')),
      created_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (env, provider_id) REFERENCES providers(env, id),
      FOREIGN KEY (env, location_id) REFERENCES locations(env, id)
    )`.execute(db);
  await sql`CREATE INDEX calendar_timeslots_day ON calendar_timeslots (env, provider_id, local_date, start_local)`.execute(db);
  await sql`CREATE INDEX calendar_timeslots_range ON calendar_timeslots (env, provider_id, location_id, start_utc)`.execute(db);

  // --- Tenant data (environment + developer on every row) -------------------------------------
  await sql`
    CREATE TABLE patients (
      id text PRIMARY KEY,
      env text NOT NULL,
      developer_id text NOT NULL REFERENCES developers(id),
      created_by_user_id text REFERENCES users(id),
      developer_patient_id text,
      first_name text NOT NULL,
      last_name text NOT NULL,
      date_of_birth date NOT NULL,
      sex_at_birth text NOT NULL CHECK (sex_at_birth IN ('male', 'female')),
      phone_number text NOT NULL,
      email_address text NOT NULL,
      address jsonb NOT NULL,
      insurance jsonb,
      gender text[],
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`
    CREATE TABLE appointments (
      id text PRIMARY KEY,
      env text NOT NULL,
      developer_id text NOT NULL REFERENCES developers(id),
      booked_by_client_id text NOT NULL,
      booked_by_user_id text REFERENCES users(id),
      patient_id text NOT NULL REFERENCES patients(id),
      developer_patient_id text,
      provider_location_id text NOT NULL,
      provider_id text NOT NULL,
      location_id text NOT NULL,
      practice_id text,
      visit_reason_id text NOT NULL,
      patient_type text NOT NULL CHECK (patient_type IN ('new', 'existing')),
      start_time timestamptz NOT NULL,
      end_time timestamptz NOT NULL CHECK (end_time > start_time),
      time_zone text NOT NULL,
      pending_start_time timestamptz,
      pending_end_time timestamptz,
      appointment_status text NOT NULL CHECK (appointment_status IN ('pending_booking', 'confirmed', 'booking_failed',
        'cancelled', 'no_show', 'pending_reschedule', 'rescheduled', 'reschedule_failed')),
      confirmation_type text NOT NULL CHECK (confirmation_type IN ('auto', 'manual', 'pending_evaluation')),
      visit_type text NOT NULL,
      is_provider_resource boolean NOT NULL DEFAULT false,
      notes text CHECK (char_length(notes) <= 100),
      cancellation_reason text CHECK (char_length(cancellation_reason) <= 50),
      cancellation_reason_type text,
      arrived_at timestamptz,
      evaluate_after timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (env, provider_location_id) REFERENCES provider_locations(env, id)
    )`.execute(db);
  await sql`CREATE INDEX appointments_dev_start ON appointments (developer_id, start_time)`.execute(db);
  await sql`CREATE INDEX appointments_dev_created ON appointments (developer_id, created_at)`.execute(db);
  await sql`CREATE INDEX appointments_dev_modified ON appointments (developer_id, updated_at)`.execute(db);
  await sql`CREATE INDEX appointments_user ON appointments (booked_by_user_id) WHERE booked_by_user_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX appointments_evaluate ON appointments (evaluate_after) WHERE evaluate_after IS NOT NULL`.execute(db);
  // Each live time range an appointment holds on its provider's calendar. A row exists while the
  // time is held (booked, or the new time of a pending reschedule); releasing time deletes the row.
  await sql`
    CREATE TABLE appointment_holds (
      appointment_id text NOT NULL REFERENCES appointments(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('current', 'pending')),
      env text NOT NULL,
      provider_id text NOT NULL,
      during tstzrange NOT NULL,
      PRIMARY KEY (appointment_id, kind),
      CONSTRAINT appointment_holds_no_overlap EXCLUDE USING gist (env WITH =, provider_id WITH =, during WITH &&)
    )`.execute(db);
  await sql`
    CREATE TABLE attachments (
      id text PRIMARY KEY,
      env text NOT NULL,
      developer_id text NOT NULL REFERENCES developers(id),
      appointment_id text NOT NULL REFERENCES appointments(id) ON DELETE CASCADE,
      attachment_type text NOT NULL CHECK (attachment_type IN ('community_care_packet', 'pcp_patient_referral')),
      content_type text NOT NULL,
      size_bytes integer NOT NULL,
      sha256 text NOT NULL,
      content bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX attachments_appointment ON attachments (appointment_id)`.execute(db);

  await sql`
    CREATE TABLE webhook_endpoints (
      developer_id text PRIMARY KEY REFERENCES developers(id) ON DELETE CASCADE,
      env text NOT NULL,
      url text NOT NULL,
      keys text[] NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`
    CREATE TABLE outbox_events (
      id text PRIMARY KEY,
      env text NOT NULL,
      developer_id text NOT NULL REFERENCES developers(id),
      appointment_id text NOT NULL,
      update_type text NOT NULL CHECK (update_type IN ('created', 'updated', 'cancelled')),
      changed_attributes text[] NOT NULL DEFAULT '{}',
      occurred_at timestamptz NOT NULL DEFAULT now(),
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'skipped')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      locked_until timestamptz,
      delivered_at timestamptz,
      last_error text
    )`.execute(db);
  await sql`CREATE INDEX outbox_due ON outbox_events (next_attempt_at) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX outbox_developer ON outbox_events (developer_id, occurred_at)`.execute(db);
  await sql`
    CREATE TABLE webhook_deliveries (
      id bigserial PRIMARY KEY,
      event_id text NOT NULL REFERENCES outbox_events(id) ON DELETE CASCADE,
      attempt integer NOT NULL,
      url text NOT NULL,
      status_code integer,
      latency_ms integer NOT NULL,
      error text,
      attempted_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id)`.execute(db);

  await sql`
    CREATE TABLE idempotency_keys (
      env text NOT NULL,
      developer_id text NOT NULL REFERENCES developers(id) ON DELETE CASCADE,
      principal text NOT NULL,
      key text NOT NULL,
      method text NOT NULL,
      path text NOT NULL,
      request_hash text NOT NULL,
      status_code integer,
      response_body jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (developer_id, principal, key)
    )`.execute(db);
  await sql`
    CREATE TABLE insurance_mapping_requests (
      id text PRIMARY KEY,
      env text NOT NULL,
      developer_id text NOT NULL REFERENCES developers(id),
      provider_location_id text NOT NULL,
      operation text NOT NULL CHECK (operation IN ('Add', 'Remove', 'Replace')),
      insurance_plan_ids text[] NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'applied', 'failed')),
      created_at timestamptz NOT NULL DEFAULT now(),
      applied_at timestamptz,
      error text
    )`.execute(db);
  await sql`
    CREATE TABLE audit_log (
      id bigserial PRIMARY KEY,
      env text NOT NULL,
      developer_id text NOT NULL,
      actor_client_id text,
      actor_user_id text,
      actor_kind text NOT NULL CHECK (actor_kind IN ('client', 'user', 'operator', 'service')),
      appointment_id text NOT NULL,
      action text NOT NULL,
      request_id text,
      at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX audit_log_appointment ON audit_log (appointment_id, at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    'audit_log', 'insurance_mapping_requests', 'idempotency_keys', 'webhook_deliveries', 'outbox_events',
    'webhook_endpoints', 'attachments', 'appointment_holds', 'appointments', 'patients', 'calendar_timeslots',
    'weekly_schedules', 'facilities', 'practice_insurance_plans', 'provider_location_insurance_plans',
    'insurance_plans', 'insurance_carriers', 'directory_changes', 'developer_provider_locations',
    'provider_locations', 'locations', 'providers', 'visit_reasons', 'specialties', 'practices',
    'login_sessions', 'refresh_tokens', 'authorization_codes', 'token_families', 'signing_keys', 'users',
    'oauth_clients', 'developers',
  ]) {
    await sql`DROP TABLE IF EXISTS ${sql.table(t)} CASCADE`.execute(db);
  }
}
