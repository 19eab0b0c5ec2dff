/**
 * `POST /v1/appointments/cancel` (docs/api/README.md#operations, docs/api/appointments.md#lifecycle; docs/api/appointments.md#cancel): cancels any non-cancelled
 * appointment the table allows, releases its held time, and records the reason. `cancellation_reason`
 * (free text) is accepted only with the types `other_patient_reason` and `other_provider_reason`.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { invalidFields, type FieldError } from '../errors.js';
import type { Principal } from '../credentials/principal.js';
import { recordChange, type Actor } from './events.js';
import { release } from './holds.js';
import { lockVisible, type LockedAppointment } from './lock.js';
import { statusFields } from './record.js';
import { assertMove } from './states.js';
import { inTransaction } from './transactions.js';

export const CANCELLATION_REASON_TYPES = [
  'patient_no_longer_needs_appointment', 'patient_no_longer_available', 'other_patient_reason', 'missing_needed_patient_information',
  'payment_or_insurance_issue', 'patient_or_visit_type_not_accepted', 'provider_not_available', 'rescheduling_patient', 'other_provider_reason',
] as const;
export type CancellationReasonType = (typeof CANCELLATION_REASON_TYPES)[number];
const FREE_TEXT_TYPES = ['other_patient_reason', 'other_provider_reason'];

export interface CancelInput {
  appointment_id: string;
  cancellation_reason_type?: CancellationReasonType;
  cancellation_reason?: string;
}

/**
 * The reason rules a schema does not say (docs/api/errors.md, "Validation"): free text only with a
 * free-text reason type. Takes any body, so it also serves one the schema refused.
 */
export function cancellationReasonErrors(body: unknown): FieldError[] {
  const input = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const type = typeof input.cancellation_reason_type === 'string' ? input.cancellation_reason_type : '';
  if (input.cancellation_reason !== undefined && !FREE_TEXT_TYPES.includes(type)) {
    return [{ field: 'cancellation_reason', message: 'is allowed only with cancellation_reason_type other_patient_reason or other_provider_reason' }];
  }
  return [];
}

function checkCancellationReason(input: Pick<CancelInput, 'cancellation_reason' | 'cancellation_reason_type'>): void {
  const errors = cancellationReasonErrors(input);
  if (errors.length) throw invalidFields(errors);
}

/** Moves a locked row to cancelled, releases its time and writes the event (shared with the operator move). */
export async function applyCancel(trx: Transaction<Database>, row: LockedAppointment, actor: Actor, input: Omit<CancelInput, 'appointment_id'>) {
  await release(trx, row.id);
  const updated = await trx
    .updateTable('appointments')
    .set({
      appointment_status: 'cancelled',
      cancellation_reason_type: input.cancellation_reason_type ?? null,
      cancellation_reason: input.cancellation_reason ?? null,
      pending_start_time: null,
      pending_end_time: null,
      evaluate_after: null,
      updated_at: sql`now()`,
    })
    .where('id', '=', row.id)
    .returning(['id', 'appointment_status', 'developer_patient_id'])
    .executeTakeFirstOrThrow();
  await recordChange(trx, actor, {
    env: row.env, developerId: row.developer_id, appointmentId: row.id, updateType: 'cancelled',
    changedAttributes: ['appointment.status'], action: 'cancel',
  });
  return statusFields(updated);
}

export async function cancelAppointment(db: Kysely<Database>, principal: Principal, input: CancelInput, opts: { requestId?: string } = {}) {
  checkCancellationReason(input);
  return inTransaction(db, async (trx) => {
    const row = await lockVisible(trx, principal, input.appointment_id);
    assertMove('cancel', row.appointment_status);
    return applyCancel(trx, row, { kind: 'principal', principal, ...(opts.requestId ? { requestId: opts.requestId } : {}) }, input);
  });
}
