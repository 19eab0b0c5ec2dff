/**
 * The rows a booking writes and the statement that writes a checked booking
 * (docs/api/appointments.md#no-double-booking): shared by the checked path (create.ts) and the cold
 * path decided in SQL (cold-booking.ts).
 */
import type { CompiledQuery } from 'kysely';
import { prefixedId, uuid } from '../../lib/ids.js';
import type { Principal } from '../credentials/principal.js';
import type { ProviderLocationContext } from '../scheduling/schedule-data.js';
import type { ContextVersions } from './booking-context.js';
import { auditRecord, outboxRecord } from './events.js';
import { rangeLiteral } from './holds.js';
import { APPOINTMENT_RETURNING } from '../../db/fast/appointment-row.js';
import { insertStatement, type InsertGuard, type InsertPart } from '../../db/fast/insert-sql.js';
import type { PatientInput } from './patient-rules.js';

/** What `bookingStatement` writes: a booking its caller has already checked. */
export interface BookingWrite {
  principal: Principal;
  pl: ProviderLocationContext;
  patient: PatientInput;
  visitReasonId: string;
  patientType: 'new' | 'existing';
  notes?: string | undefined;
  start: Date;
  end: Date;
  now: Date;
  /** The versions the checks' context was read with: nothing is inserted unless they still hold. */
  versions: ContextVersions;
  /** The booking is never evaluated: it stays `pending_booking` (a forced outcome, outcome-policy.ts). */
  stayPending?: boolean;
  requestId?: string;
}

/** The booking statement's guard (migration 0010): the directory and the provider's calendar are as the context saw them. */
function versionGuard(env: string, providerId: string, v: ContextVersions): InsertGuard {
  return {
    name: 'context-versions',
    values: [v.directory, env, providerId, v.calendar],
    condition: (p) =>
      `(SELECT version FROM directory_version) = ${p(0)}::bigint ` +
      // FOR SHARE: a schedule change of this provider (time off, weekly hours) updates this row first and
      // holds it until it commits, so the booking waits for it and then sees the moved version (docs/scheduling.md, "Races").
      `AND coalesce((SELECT version FROM calendar_versions WHERE env = ${p(1)} AND provider_id = ${p(2)} FOR SHARE), 0) = ${p(3)}::bigint`,
  };
}

/**
 * Where a booking lands: the columns that come from its provider-location, as values (a checked
 * booking) or as columns of the statement's `"_guard"` row (`fromGuard`: a cold booking decided in SQL).
 */
export interface Placement {
  providerId: string;
  locationId: string;
  practiceId: string;
  timeZone: string;
  visitType: ProviderLocationContext['visitType'];
  isProviderResource: boolean;
  confirmationType: 'manual' | 'pending_evaluation';
  evaluateAfter: Date | null;
  end: Date;
  /** The held range's literal (`rangeLiteral`). */
  during: string;
}

/** The placement of a checked booking `w`. */
function placementOf(w: BookingWrite): Placement {
  const { pl } = w;
  const manual = pl.confirmationType === 'manual';
  return {
    providerId: pl.providerId,
    locationId: pl.locationId,
    practiceId: pl.practiceId,
    timeZone: pl.timeZone,
    visitType: pl.visitType,
    isProviderResource: pl.isProviderResource,
    // docs/api/appointments.md#moves-the-service-makes: auto bookings are `pending_evaluation` until the evaluator decides.
    confirmationType: manual ? 'manual' : 'pending_evaluation',
    evaluateAfter: manual || w.stayPending === true ? null : w.now,
    end: w.end,
    during: rangeLiteral(w.start, w.end),
  };
}

/** What every booking writes whatever decides it: the request's side of `BookingWrite`. */
export type BookingRequest = Omit<BookingWrite, 'pl' | 'end' | 'versions'> & { providerLocationId: string };

/**
 * The rows of a booking (docs/api/appointments.md#no-double-booking): the patient, the held time,
 * the outbox event and the audit record (CTEs), and the appointment (the last insert).
 */
export function bookingParts(w: BookingRequest, at: Placement): { ctes: [string, InsertPart][]; last: InsertPart } {
  const { principal, patient: p, start: startDate } = w;
  const id = uuid();
  const patientId = prefixedId('pa');
  const actor = { kind: 'principal' as const, principal, ...(w.requestId ? { requestId: w.requestId } : {}) };
  const change = { env: principal.env, developerId: principal.developerId, appointmentId: id, updateType: 'created' as const, changedAttributes: [], action: 'create' };
  const ctes: [string, InsertPart][] = [
    ['patient', { table: 'patients', row: {
      id: patientId,
      env: principal.env,
      developer_id: principal.developerId,
      created_by_user_id: principal.kind === 'user' ? principal.userId : null,
      developer_patient_id: p.developer_patient_id ?? null,
      first_name: p.first_name,
      last_name: p.last_name,
      date_of_birth: p.date_of_birth,
      sex_at_birth: p.sex_at_birth,
      phone_number: p.phone_number,
      email_address: p.email_address,
      address: JSON.stringify(p.patient_address),
      insurance: p.insurance ? JSON.stringify(p.insurance) : null,
      gender: p.gender ?? null,
    } }],
    ['hold', { table: 'appointment_holds', row: {
      appointment_id: id, kind: 'current', env: principal.env, provider_id: at.providerId, during: at.during,
    } }],
    ['event', { table: 'outbox_events', row: outboxRecord(actor, change) }],
    ['audit', { table: 'audit_log', row: auditRecord(actor, change) }],
  ];
  const last: InsertPart = { table: 'appointments', row: {
      id,
      env: principal.env,
      developer_id: principal.developerId,
      booked_by_client_id: principal.clientId,
      booked_by_user_id: principal.kind === 'user' ? principal.userId : null,
      patient_id: patientId,
      developer_patient_id: p.developer_patient_id ?? null,
      provider_location_id: w.providerLocationId,
      provider_id: at.providerId,
      location_id: at.locationId,
      practice_id: at.practiceId,
      visit_reason_id: w.visitReasonId,
      patient_type: w.patientType,
      start_time: startDate,
      end_time: at.end,
      time_zone: at.timeZone,
      pending_start_time: null,
      pending_end_time: null,
      appointment_status: 'pending_booking',
      confirmation_type: at.confirmationType,
      visit_type: at.visitType,
      is_provider_resource: at.isProviderResource,
      notes: w.notes ?? null,
      cancellation_reason: null,
      cancellation_reason_type: null,
      arrived_at: null,
      evaluate_after: at.evaluateAfter,
  } };
  return { ctes, last };
}

/**
 * The booking's one atomic statement (docs/api/appointments.md#no-double-booking, docs/api/webhooks.md#delivery-and-retries): the patient, the appointment, its held
 * time (the no-overlap constraint refuses a taken time: `conflict`), the outbox event and the audit record,
 * returning the appointment row as one JSON array (`APPOINTMENT_RETURNING`); no row and nothing
 * inserted when `versions` no longer hold (the directory or the provider's calendar changed).
 * Raw SQL (src/db/fast/insert-sql.ts): the query builder's cost for this statement was a large part of a
 * booking's CPU. Exported for the benchmark that measures this write on its own (the ceiling of
 * booking throughput).
 */
export function bookingStatement(statementTexts: Map<string, string>, w: BookingWrite): CompiledQuery {
  const { ctes, last } = bookingParts({ ...w, providerLocationId: w.pl.id }, placementOf(w));
  return insertStatement(statementTexts, ctes, last, APPOINTMENT_RETURNING, versionGuard(w.principal.env, w.pl.providerId, w.versions));
}
