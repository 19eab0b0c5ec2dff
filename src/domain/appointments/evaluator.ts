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
 * `runEvaluatorOnce` is one pass; the evaluator job (src/jobs/evaluator.ts) runs passes in a loop.
 * Each pass also deletes expired Idempotency-Key records. A process evaluates its own
 * environment's appointments. Each row is evaluated inside a savepoint: a row that fails is rolled
 * back alone, reported, and set aside for a minute, so it never holds up the rows behind it.
 */
import { sql, type Kysely } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import { isScheduledStart } from '../availability/scheduled-start.js';
import { loadProviderLocations } from '../scheduling/schedule-data.js';
import type { Actor } from './events.js';
import type { LockedAppointment } from './lock.js';
import { EVALUATE_EVERY_MOVE, type BookingOutcomePolicy } from './outcome-policy.js';
import { applyBookingFailed, applyConfirmed, applyRescheduled, applyRescheduleFailed } from './service-moves.js';
import { inTransaction } from './transactions.js';

export type EvaluationOutcome = 'confirmed' | 'booking_failed' | 'rescheduled' | 'reschedule_failed' | 'skipped' | 'error';

/** How long a row whose evaluation failed waits before it is tried again. */
const RETRY_FAILED_ROW_MS = 60_000;

export interface EvaluatorPass {
  evaluated: { appointmentId: string; outcome: EvaluationOutcome }[];
}

const SERVICE: Actor = { kind: 'service' };

/** Decides and applies one claimed row inside the pass's transaction. */
async function evaluate(trx: import('kysely').Transaction<Database>, row: LockedAppointment, now: Date, outcomes: BookingOutcomePolicy): Promise<EvaluationOutcome> {
  const pl = (await loadProviderLocations(trx, row.env, [row.provider_location_id])).get(row.provider_location_id);
  const offered = async (start: Date | null) =>
    !!pl?.active &&
    start !== null &&
    (await isScheduledStart(trx, { env: row.env, pl, visitReasonId: row.visit_reason_id, patientType: row.patient_type, startMs: start.getTime(), now }));
  if (row.appointment_status === 'pending_booking') {
    if (outcomes.forcedOutcome(row.provider_location_id, 'booking') === 'fail' || !(await offered(row.start_time))) {
      await applyBookingFailed(trx, row, SERVICE);
      return 'booking_failed';
    }
    await applyConfirmed(trx, row, SERVICE);
    return 'confirmed';
  }
  if (row.appointment_status === 'pending_reschedule') {
    if (outcomes.forcedOutcome(row.provider_location_id, 'reschedule') === 'fail' || !(await offered(row.pending_start_time))) {
      await applyRescheduleFailed(trx, row, SERVICE);
      return 'reschedule_failed';
    }
    await applyRescheduled(trx, row, SERVICE);
    return 'rescheduled';
  }
  await trx.updateTable('appointments').set({ evaluate_after: null }).where('id', '=', row.id).execute();
  return 'skipped';
}

/**
 * One evaluation pass over at most `limit` due appointments (of `env` when given). `onRowError`
 * hears of each row whose evaluation failed (its outcome is then `error`). `outcomes`: the outcomes
 * forced on moves (none by default).
 */
export async function runEvaluatorOnce(
  db: Kysely<Database>,
  opts: { now?: Date; limit?: number; env?: Env; onRowError?: (err: unknown, appointmentId: string) => void; outcomes?: BookingOutcomePolicy } = {},
): Promise<EvaluatorPass> {
  const now = opts.now ?? new Date();
  const evaluated = await inTransaction(db, async (trx) => {
    let q = trx.selectFrom('appointments').selectAll().where('evaluate_after', '<=', now);
    if (opts.env) q = q.where('env', '=', opts.env);
    const due = await q.orderBy('evaluate_after').limit(opts.limit ?? 50).forUpdate().skipLocked().execute();
    const out: EvaluatorPass['evaluated'] = [];
    for (const row of due) {
      await sql`SAVEPOINT evaluate_row`.execute(trx);
      try {
        out.push({ appointmentId: row.id, outcome: await evaluate(trx, row, now, opts.outcomes ?? EVALUATE_EVERY_MOVE) });
        await sql`RELEASE SAVEPOINT evaluate_row`.execute(trx);
      } catch (err) {
        await sql`ROLLBACK TO SAVEPOINT evaluate_row`.execute(trx);
        await trx.updateTable('appointments').set({ evaluate_after: new Date(now.getTime() + RETRY_FAILED_ROW_MS) }).where('id', '=', row.id).execute();
        opts.onRowError?.(err, row.id);
        out.push({ appointmentId: row.id, outcome: 'error' });
      }
    }
    return out;
  });
  await db.deleteFrom('idempotency_keys').where('expires_at', '<', now).execute();
  return { evaluated };
}
