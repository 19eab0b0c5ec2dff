/**
 * A provider-location as the reads return it (its row, its provider's and its location's columns,
 * as `json_build_object` or as a row): the booking context (src/domain/appointments/booking-context.ts),
 * kept availability (src/domain/availability/kept-statements.ts) and `loadProviderLocations`
 * (schedule-data.ts), and the one conversion into the `ProviderLocationContext` slots and bookings
 * are checked against (docs/scheduling.md).
 */
import type { ProviderLocationContext } from './schedule-data.js';

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
