/**
 * The outcomes the sandbox fixtures force (src/domain/directory/sandbox-fixtures.ts): a booking at
 * `pr_failed|lo_failed` always fails, a reschedule at `pr_reschedulefailed|lo_reschedulefailed`
 * always fails, moves at `pr_pending|lo_pending` are never evaluated (they stay pending), and
 * `pr_manual|lo_manual` needs nothing here (its bookings are manual, so never evaluated anyway).
 * Installed by the composition root (`buildApp`, `startBackgroundWorkers`).
 */
import type { BookingOutcomePolicy } from '../appointments/outcome-policy.js';
import { SANDBOX_FIXTURES } from '../directory/sandbox-fixtures.js';

/** The sandbox fixtures' forced outcomes. */
export const sandboxBookingOutcomes: BookingOutcomePolicy = {
  forcedOutcome(providerLocationId, move) {
    if (providerLocationId === SANDBOX_FIXTURES.pending) return 'stay_pending';
    if (move === 'booking' && providerLocationId === SANDBOX_FIXTURES.failed) return 'fail';
    if (move === 'reschedule' && providerLocationId === SANDBOX_FIXTURES.rescheduleFailed) return 'fail';
    return undefined;
  },
};
