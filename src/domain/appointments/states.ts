/**
 * The appointment state table (docs/api/appointments.md#lifecycle, docs/api/appointments.md#moves-the-service-makes): which client moves each status
 * admits. A move the table does not admit is a `conflict` naming the current status.
 */
import type { AppointmentStatus } from '../../db/schema.js';
import { conflict } from '../errors.js';

export const APPOINTMENT_STATUSES: AppointmentStatus[] = [
  'pending_booking', 'confirmed', 'booking_failed', 'cancelled', 'no_show', 'pending_reschedule', 'rescheduled', 'reschedule_failed',
];

/** Statuses whose current time is held (live appointments, docs/api/appointments.md#no-double-booking). */
export const LIVE_STATUSES: AppointmentStatus[] = ['pending_booking', 'confirmed', 'no_show', 'pending_reschedule', 'rescheduled', 'reschedule_failed'];

export type ClientMove = 'confirm' | 'cancel' | 'reschedule' | 'arrived' | 'no_show';

const ALLOWED: Record<ClientMove, AppointmentStatus[]> = {
  confirm: ['pending_booking'],
  cancel: ['pending_booking', 'booking_failed', 'confirmed', 'pending_reschedule', 'reschedule_failed', 'rescheduled'],
  reschedule: ['pending_booking', 'confirmed', 'pending_reschedule', 'rescheduled'],
  // docs/api/appointments.md#lifecycle: "any". `arrived` moves no time. `no_show` of a cancelled or failed booking holds
  // its time again, and is a `conflict` when another appointment holds it now (update-status.ts).
  arrived: APPOINTMENT_STATUSES,
  no_show: APPOINTMENT_STATUSES,
};

/** Throws a `conflict` naming the current status when `move` is not allowed from `status`. */
export function assertMove(move: ClientMove, status: AppointmentStatus): void {
  const allowed = ALLOWED[move];
  if (allowed.includes(status)) return;
  const verb = { confirm: 'confirmed', cancel: 'cancelled', reschedule: 'rescheduled', arrived: 'marked arrived', no_show: 'marked no_show' }[move];
  throw conflict(`appointment cannot be ${verb}: current status is ${status}`, 'appointment_status');
}

/** Operator and service moves (docs/api/admin.md#appointment-transitions `appointment transition`, docs/api/appointments.md#moves-the-service-makes). */
export type OperatorTarget = 'confirmed' | 'booking_failed' | 'cancelled' | 'rescheduled' | 'reschedule_failed';

const OPERATOR_FROM: Record<OperatorTarget, AppointmentStatus[]> = {
  confirmed: ['pending_booking'],
  booking_failed: ['pending_booking'],
  cancelled: ['pending_booking', 'booking_failed', 'confirmed', 'pending_reschedule', 'reschedule_failed', 'rescheduled', 'no_show'],
  rescheduled: ['pending_reschedule'],
  reschedule_failed: ['pending_reschedule'],
};

export function assertOperatorMove(to: OperatorTarget, status: AppointmentStatus): void {
  if (!OPERATOR_FROM[to].includes(status)) {
    throw conflict(`appointment cannot move to ${to}: current status is ${status}`, 'to');
  }
}
