/**
 * Outcomes forced on bookings and reschedules, whatever the schedule says. The booking path and the
 * evaluator ask a `BookingOutcomePolicy` and know no provider-location by name; the composition root
 * installs the one it wants (the sandbox's fixtures: src/domain/sandbox/booking-outcomes.ts).
 */

/** A move the evaluator decides: a new booking, or a reschedule of one. */
export type EvaluatedMove = 'booking' | 'reschedule';

/**
 * - `stay_pending`: the move is never evaluated (it stays `pending_booking` / `pending_reschedule`);
 * - `fail`: the evaluator fails it (`booking_failed` / `reschedule_failed`) even when the time is offered.
 */
export type ForcedOutcome = 'stay_pending' | 'fail';

export interface BookingOutcomePolicy {
  /** The outcome forced on `move` at `providerLocationId`, or undefined when the evaluator decides. */
  forcedOutcome(providerLocationId: string, move: EvaluatedMove): ForcedOutcome | undefined;
}

/** No forced outcomes: the evaluator decides every move. The default of the domain functions. */
export const EVALUATE_EVERY_MOVE: BookingOutcomePolicy = { forcedOutcome: () => undefined };
