/**
 * The operator's move of an appointment (docs/api/admin.md#appointment-transitions `appointment transition ID --to STATUS
 * [--reason-type T]`, `POST /admin/v1/appointments/{id}/transition`): a provider- or service-side
 * move that fires the webhook like any other change. Moves the table does not allow are a `conflict`
 * naming the current status.
 */
import type { Kysely } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import { invalidFields, type FieldError } from '../errors.js';
import { applyCancel, CANCELLATION_REASON_TYPES, type CancellationReasonType } from './cancel.js';
import type { Actor } from './events.js';
import { lockAny } from './lock.js';
import { applyBookingFailed, applyConfirmed, applyRescheduled, applyRescheduleFailed } from './service-moves.js';
import { assertOperatorMove, type OperatorTarget } from './states.js';
import { inTransaction } from './transactions.js';

export const OPERATOR_TARGETS: OperatorTarget[] = ['confirmed', 'booking_failed', 'cancelled', 'rescheduled', 'reschedule_failed'];

/**
 * Every error of an operator move's input at once (docs/api/errors.md, "Validation"): a known
 * target, a known reason type, and a reason type only with `to: cancelled`. Any value is taken.
 */
export function operatorTransitionErrors(body: unknown): FieldError[] {
  const b = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const errors: FieldError[] = [];
  if (typeof b.to === 'string' && !OPERATOR_TARGETS.includes(b.to as OperatorTarget)) errors.push({ field: 'to', message: `must be one of: ${OPERATOR_TARGETS.join(', ')}` });
  const reason = b.cancellation_reason_type;
  if (typeof reason === 'string') {
    if (!CANCELLATION_REASON_TYPES.includes(reason as CancellationReasonType)) {
      errors.push({ field: 'cancellation_reason_type', message: `must be one of: ${CANCELLATION_REASON_TYPES.join(', ')}` });
    } else if (b.to !== 'cancelled') errors.push({ field: 'cancellation_reason_type', message: 'is allowed only with to=cancelled' });
  }
  return errors;
}

export async function operatorTransition(
  db: Kysely<Database>,
  env: Env,
  id: string,
  input: { to: string; cancellation_reason_type?: string },
  opts: { requestId?: string } = {},
): Promise<{ appointment_id: string; appointment_status: string; developer_patient_id?: string }> {
  const errors = operatorTransitionErrors(input);
  if (errors.length) throw invalidFields(errors);
  const to = input.to as OperatorTarget;
  const actor: Actor = { kind: 'operator', ...(opts.requestId ? { requestId: opts.requestId } : {}) };
  return inTransaction(db, async (trx) => {
    const row = await lockAny(trx, env, id);
    assertOperatorMove(to, row.appointment_status);
    if (to === 'cancelled') {
      return applyCancel(trx, row, actor, input.cancellation_reason_type ? { cancellation_reason_type: input.cancellation_reason_type as CancellationReasonType } : {});
    }
    if (to === 'confirmed') await applyConfirmed(trx, row, actor);
    else if (to === 'booking_failed') await applyBookingFailed(trx, row, actor);
    else if (to === 'rescheduled') await applyRescheduled(trx, row, actor);
    else await applyRescheduleFailed(trx, row, actor);
    return {
      appointment_id: row.id,
      appointment_status: to,
      ...(row.developer_patient_id !== null ? { developer_patient_id: row.developer_patient_id } : {}),
    };
  });
}
