/**
 * A provider-location as the reads return it (its row, its provider's and its location's columns,
 * as `json_build_object` or as a row): the booking context (src/domain/appointments/booking-context.ts),
 * kept availability (src/domain/availability/kept-statements.ts) and `loadProviderLocations`
 * (schedule-data.ts), and the one conversion into the `ProviderLocationContext` slots and bookings
 * are checked against (docs/scheduling.md).
 */

/** A provider-location as slots and bookings are checked against it (re-exported by schedule-data.ts). */
export interface ProviderLocationContext {
  id: string;
  providerId: string;
  locationId: string;
  practiceId: string;
  timeZone: string;
  active: boolean;
  confirmationType: 'auto' | 'manual' | 'pending_evaluation';
  visitType: 'in_person' | 'platform_video_service' | 'third_party_video_service';
  isProviderResource: boolean;
  locationPhone: string | null;
  locationPhoneExtension: string | null;
  /** Visit reasons the provider accepts (docs/api/appointments.md#create-an-appointment `visit_reason_id`). */
  visitReasonIds: string[];
  defaultVisitReasonId: string | null;
  /** Booking requirements, e.g. `patient.insurance` (docs/api/directory.md#providers-by-npi `booking_requirements`). */
  requiredFields: string[];
  /** Whose booking requests it takes (`in_network`, `out_of_network`, `self_pay`); set where bookings are checked. */
  acceptsBookingRequestsFrom?: string[];
}

export interface ProviderLocationJson {
  id: string;
  provider_id: string;
  location_id: string;
  practice_id: string;
  time_zone: string;
  active: boolean;
  confirmation_type: ProviderLocationContext['confirmationType'];
  visit_type: ProviderLocationContext['visitType'];
  is_provider_resource: boolean;
  phone_number: string | null;
  phone_extension: string | null;
  visit_reason_ids: string[] | null;
  default_visit_reason_id: string | null;
  required_fields: string[] | null;
  /** Read where bookings are checked; absent elsewhere. */
  accepts_booking_requests_from?: string[] | null;
}

/** Who a provider-location takes booking requests from when its row says nothing. */
const EVERY_REQUESTER = ['in_network', 'out_of_network', 'self_pay'];

/**
 * The context of a provider-location read as JSON: its visit reasons are its provider's (else the
 * provider's default one); whom it takes booking requests from is set only when the read asked.
 */
export function providerLocationOfJson(p: ProviderLocationJson): ProviderLocationContext {
  const reasons = p.visit_reason_ids?.length ? p.visit_reason_ids : p.default_visit_reason_id ? [p.default_visit_reason_id] : [];
  return {
    id: p.id,
    providerId: p.provider_id,
    locationId: p.location_id,
    practiceId: p.practice_id,
    timeZone: p.time_zone,
    active: p.active,
    confirmationType: p.confirmation_type,
    visitType: p.visit_type,
    isProviderResource: p.is_provider_resource,
    locationPhone: p.phone_number,
    locationPhoneExtension: p.phone_extension,
    visitReasonIds: reasons,
    defaultVisitReasonId: p.default_visit_reason_id,
    requiredFields: p.required_fields ?? [],
    ...(p.accepts_booking_requests_from !== undefined ? { acceptsBookingRequestsFrom: p.accepts_booking_requests_from ?? EVERY_REQUESTER } : {}),
  };
}
