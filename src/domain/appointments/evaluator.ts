/**
 * The booking evaluator (docs/api/appointments.md#moves-the-service-makes): a background loop that claims due appointments
 * (`evaluate_after <= now`, `FOR UPDATE SKIP LOCKED`, so any number of processes can run it and
 * nothing is evaluated twice) and moves them:
 * - `pending_booking` (auto): `confirmed` when the schedule still offers the time, else `booking_failed`
 *   (time released); `manual` bookings are never due, they wait for confirm or the operator;
 * - `pending_reschedule`: `rescheduled` (old time released) when the new time is still offered, else
 *   `reschedule_failed` (new time released, old kept).
 * A `BookingOutcomePolicy` (`outcomes`) may force a move to fail whatever the schedule says (the
 * sandbox fixtures do: src/domain/sandbox/booking-outcomes.ts); moves it keeps pending are never due.
 *
 * `runEvaluatorOnce` is one pass over one batch, set-based (docs/performance.md, "The evaluator"), in
 * one short transaction: claim the batch (one statement), read the schedules behind its start times
 * (one statement per environment in the batch: src/domain/scheduling/schedule-for-starts.ts), decide
 * every row in memory (evaluator-decide.ts), then apply every move with its webhook event and audit
 * row (one statement, two when a reschedule succeeded: evaluator-apply.ts). A row whose evaluation
 * fails is rolled back alone, reported, and set aside for a minute, so it never holds up the rows
 * beside it. The evaluator job (src/jobs/evaluator.ts) runs passes in a loop, yielding between
 * them. Each pass also deletes expired Idempotency-Key records. A process evaluates its own
 * environment's appointments.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import { LocalClock } from '../scheduling/local-time.js';
import { loadSchedulesForStarts, type SchedulesForStarts } from '../scheduling/schedule-for-starts.js';
import { applyBatch, type EvaluationOutcome } from './evaluator-apply.js';
import { decideMoves, startsToCheck, type DueAppointment } from './evaluator-decide.js';
import { EVALUATE_EVERY_MOVE, type BookingOutcomePolicy } from './outcome-policy.js';
import { inTransaction } from './transactions.js';

export type { EvaluationOutcome } from './evaluator-apply.js';

export interface EvaluatorPass {
  evaluated: { appointmentId: string; outcome: EvaluationOutcome }[];
}

/** Claims up to `limit` due appointments (oldest due first), skipping rows another transaction holds. */
async function claimDue(trx: Transaction<Database>, q: { now: Date; env: Env | undefined; limit: number }): Promise<DueAppointment[]> {
  let s = trx
    .selectFrom('appointments')
    .select([
      'id', 'env', 'developer_id', 'appointment_status', 'confirmation_type', 'provider_location_id', 'visit_reason_id', 'patient_type',
      'start_time', 'end_time', 'pending_start_time', 'pending_end_time',
    ])
    .where('evaluate_after', '<=', q.now);
  if (q.env) s = s.where('env', '=', q.env);
  return s.orderBy('evaluate_after').limit(q.limit).forUpdate().skipLocked().execute();
}

/**
 * One evaluation pass over at most `limit` due appointments (of `env` when given). `onRowError`
 * hears of each row whose evaluation failed (its outcome is then `error`). `outcomes`: the outcomes
 * forced on moves (none by default). `clock`: a memo of local-time conversions a caller running many
 * passes may keep.
 */
export async function runEvaluatorOnce(
  db: Kysely<Database>,
  opts: {
    now?: Date;
    limit?: number;
    env?: Env;
    onRowError?: (err: unknown, appointmentId: string) => void;
    outcomes?: BookingOutcomePolicy;
    clock?: LocalClock;
  } = {},
): Promise<EvaluatorPass> {
  const now = opts.now ?? new Date();
  const outcomes = opts.outcomes ?? EVALUATE_EVERY_MOVE;
  const clock = opts.clock ?? new LocalClock();
  const evaluated = await inTransaction(db, async (trx) => {
    const due = await claimDue(trx, { now, env: opts.env, limit: opts.limit ?? 50 });
    if (due.length === 0) return [];
    const schedules = new Map<Env, SchedulesForStarts>();
    for (const [env, starts] of startsToCheck(due, outcomes)) schedules.set(env, await loadSchedulesForStarts(trx, env, starts));
    return applyBatch(trx, decideMoves(due, schedules, { now, outcomes, clock }), now, opts.onRowError);
  });
  await db.deleteFrom('idempotency_keys').where('expires_at', '<', now).execute();
  return { evaluated };
}
