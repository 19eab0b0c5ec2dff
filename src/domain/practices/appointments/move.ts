/**
 * A practice moves an appointment to another start time (docs/decisions/0014-practice-workspace.md,
 * "One set of rules"): the reschedule path (docs/api/appointments.md#reschedule) with the practice as
 * the one who proposes the new time. The same checks as `/v1` reschedule (a start the availability
 * endpoint offers, `invalid` naming `start_time`; free, else `conflict`), the same no-overlap
 * guarantee (the new time is held as a `pending` hold under the exclusion constraint), and since the
 * provider's side proposes it, the move is settled at once in the same transaction
 * (docs/api/appointments.md#lifecycle: "`pending_reschedule` settled by the provider"): the new time
 * becomes current, the old one is released, status `rescheduled`, one event with
 * `appointment.status` and `appointment.start_time` (the operator's settle, service-moves.ts).
 *
 * Allowed from `confirmed`, `pending_reschedule` and `rescheduled`; a `pending_booking` is first
 * confirmed or declined (the decision file says why).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { holdPending } from '../../appointments/holds.js';
import { moveTarget, offeredUnderCalendarLock } from '../../appointments/move-check.js';
import { applyRescheduled } from '../../appointments/service-moves.js';
import { assertMove } from '../../appointments/states.js';
import { inTransaction, slotTaken } from '../../appointments/transactions.js';
import type { AppointmentStatus } from '../../../db/schema.js';
import { conflict, invalidInput } from '../../errors.js';
import { LocalClock, parseOffsetDateTime } from '../../scheduling/local-time.js';
import { staffActor, type StaffPrincipal } from '../staff-principal.js';
import type { StaffMoveResult } from './actions.js';
import { lockPracticeAppointment, requireActingStaff } from './scope.js';

function assertMovable(status: AppointmentStatus): void {
  if (status === 'pending_booking') {
    throw conflict('appointment cannot be moved: current status is pending_booking; confirm or decline it first', 'appointment_status');
  }
  assertMove('reschedule', status);
}

/** Moves one of the practice's appointments to `start_time` (see the module comment). */
export async function staffMove(
  db: Kysely<Database>,
  staff: StaffPrincipal,
  id: string,
  input: { start_time: string },
  opts: { requestId?: string; now?: Date; clock?: LocalClock } = {},
): Promise<StaffMoveResult & { start_time: Date; end_time: Date }> {
  requireActingStaff(staff);
  const now = opts.now ?? new Date();
  const clock = opts.clock ?? new LocalClock();
  const start = parseOffsetDateTime(input.start_time);
  if (!start) throw invalidInput('start_time', 'must be an ISO-8601 date-time with a UTC offset');
  return inTransaction(db, async (trx) => {
    // Everything the move needs is read under the appointment's lock, as a reschedule's (move-check.ts).
    const row = await lockPracticeAppointment(trx, staff, id);
    assertMovable(row.appointment_status);
    const target = await moveTarget(trx, staff.env, row, 'start_time');
    if (!target.ok) throw invalidInput(target.error.field, target.error.message);
    const { duration, pl } = target;
    const newStart = start.toJSDate();
    const newEnd = start.plus({ minutes: duration }).toJSDate();
    if (!(await offeredUnderCalendarLock(trx, row, pl, start.toMillis(), { now, clock }))) {
      throw invalidInput('start_time', 'is not a start time the availability endpoint offers for this appointment');
    }
    try {
      await holdPending(trx, { appointmentId: row.id, env: row.env, providerId: row.provider_id, start: newStart, end: newEnd });
    } catch (e) {
      slotTaken(e, 'this start time is no longer available: another appointment holds it', 'start_time');
    }
    await applyRescheduled(trx, { ...row, pending_start_time: newStart, pending_end_time: newEnd }, staffActor(staff, opts.requestId));
    return { appointment_id: row.id, appointment_status: 'rescheduled' as const, start_time: newStart, end_time: newEnd };
  });
}
