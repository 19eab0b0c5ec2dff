/**
 * A practice's moves of its appointments (docs/decisions/0014-practice-workspace.md, "One set of
 * rules"): confirm, decline, cancel for the provider, move, arrived and no-show. Each runs the same
 * domain step as the admin API or `/v1` (service-moves.ts, cancel.ts, update-status.ts) in one
 * transaction on the locked row, with the staff member as the actor: the same outbox event (the
 * booking developer gets the same signed webhook, docs/api/webhooks.md#event-body) and an audit row
 * with `actor_kind = 'staff'`. A move the lifecycle does not allow (docs/api/appointments.md#lifecycle)
 * is a `conflict` naming the current status.
 */
import type { Kysely } from 'kysely';
import type { AppointmentStatus, Database } from '../../../db/schema.js';
import { applyCancel, cancellationReasonErrors, type CancellationReasonType } from '../../appointments/cancel.js';
import { applyBookingFailed, applyConfirmed } from '../../appointments/service-moves.js';
import { assertMove } from '../../appointments/states.js';
import { inTransaction } from '../../appointments/transactions.js';
import { applyStatusUpdate } from '../../appointments/update-status.js';
import { conflict, invalidFields, type FieldError } from '../../errors.js';
import { staffActor, type StaffPrincipal } from '../staff-principal.js';
import { lockPracticeAppointment, requireActingStaff } from './scope.js';

/** The cancellation reasons a practice may give (decision 0014): the provider's side of the list in docs/api/appointments.md#cancel. */
export const PROVIDER_CANCELLATION_REASON_TYPES = [
  'provider_not_available', 'rescheduling_patient', 'other_provider_reason',
  'missing_needed_patient_information', 'payment_or_insurance_issue', 'patient_or_visit_type_not_accepted',
] as const satisfies readonly CancellationReasonType[];
export type ProviderCancellationReasonType = (typeof PROVIDER_CANCELLATION_REASON_TYPES)[number];

/** What a move answers: the appointment and its status after it. */
export interface StaffMoveResult {
  appointment_id: string;
  appointment_status: AppointmentStatus;
}

interface MoveOpts {
  requestId?: string;
}

const result = (id: string, status: AppointmentStatus): StaffMoveResult => ({ appointment_id: id, appointment_status: status });

/**
 * Confirms a booking waiting for the provider: `pending_booking` with `confirmation_type` `manual`
 * (docs/api/appointments.md#moves-the-service-makes). An automatic booking waits for the service's
 * evaluation and is a `conflict`, as is any other status.
 */
export async function staffConfirm(db: Kysely<Database>, staff: StaffPrincipal, id: string, opts: MoveOpts = {}): Promise<StaffMoveResult> {
  requireActingStaff(staff);
  return inTransaction(db, async (trx) => {
    const row = await lockPracticeAppointment(trx, staff, id);
    assertMove('confirm', row.appointment_status);
    if (row.confirmation_type !== 'manual') {
      throw conflict(`appointment cannot be confirmed: it is confirmed automatically (confirmation_type ${row.confirmation_type}); current status is ${row.appointment_status}`, 'appointment_status');
    }
    await applyConfirmed(trx, row, staffActor(staff, opts.requestId));
    return result(row.id, 'confirmed');
  });
}

/** Declines a booking the provider cannot take: `pending_booking` → `booking_failed`, its time released. */
export async function staffDecline(db: Kysely<Database>, staff: StaffPrincipal, id: string, opts: MoveOpts = {}): Promise<StaffMoveResult> {
  requireActingStaff(staff);
  return inTransaction(db, async (trx) => {
    const row = await lockPracticeAppointment(trx, staff, id);
    if (row.appointment_status !== 'pending_booking') throw conflict(`appointment cannot be declined: current status is ${row.appointment_status}`, 'appointment_status');
    await applyBookingFailed(trx, row, staffActor(staff, opts.requestId));
    return result(row.id, 'booking_failed');
  });
}

export interface StaffCancelInput {
  cancellation_reason_type: string;
  cancellation_reason?: string | undefined;
}

/** Every error of a practice's cancellation body at once (docs/api/errors.md, "Validation"). */
export function staffCancelErrors(body: unknown): FieldError[] {
  const b = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const errors: FieldError[] = [];
  if (typeof b.cancellation_reason_type !== 'string' || !PROVIDER_CANCELLATION_REASON_TYPES.includes(b.cancellation_reason_type as ProviderCancellationReasonType)) {
    errors.push({ field: 'cancellation_reason_type', message: `must be one of: ${PROVIDER_CANCELLATION_REASON_TYPES.join(', ')}` });
  }
  if (b.cancellation_reason !== undefined && (typeof b.cancellation_reason !== 'string' || b.cancellation_reason.length > 50)) {
    errors.push({ field: 'cancellation_reason', message: 'must be text of at most 50 characters' });
  } else errors.push(...cancellationReasonErrors(b));
  return errors;
}

/**
 * Cancels for the provider (docs/api/appointments.md#cancel): any status but `cancelled` and
 * `no_show`, a provider reason type, free text only with `other_provider_reason`; the time is released.
 */
export async function staffCancel(db: Kysely<Database>, staff: StaffPrincipal, id: string, input: StaffCancelInput, opts: MoveOpts = {}): Promise<StaffMoveResult> {
  requireActingStaff(staff);
  const errors = staffCancelErrors(input);
  if (errors.length) throw invalidFields(errors);
  return inTransaction(db, async (trx) => {
    const row = await lockPracticeAppointment(trx, staff, id);
    assertMove('cancel', row.appointment_status);
    const out = await applyCancel(trx, row, staffActor(staff, opts.requestId), {
      cancellation_reason_type: input.cancellation_reason_type as CancellationReasonType,
      ...(input.cancellation_reason !== undefined ? { cancellation_reason: input.cancellation_reason } : {}),
    });
    return result(out.appointment_id, out.appointment_status);
  });
}

/**
 * Marks the patient arrived or not come (docs/api/appointments.md#arrived-and-no-show): the same
 * rules as update-status (`no_show` only from the start time until two days after it).
 */
export async function staffMarkStatus(
  db: Kysely<Database>,
  staff: StaffPrincipal,
  id: string,
  status: 'arrived' | 'no_show',
  opts: MoveOpts & { now?: Date } = {},
): Promise<StaffMoveResult> {
  requireActingStaff(staff);
  return inTransaction(db, async (trx) => {
    const row = await lockPracticeAppointment(trx, staff, id);
    const out = await applyStatusUpdate(trx, row, staffActor(staff, opts.requestId), status, opts.now);
    return result(out.appointment_id, out.appointment_status);
  });
}
