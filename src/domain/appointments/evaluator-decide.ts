/**
 * The booking evaluator's decisions (docs/api/appointments.md#moves-the-service-makes), made in
 * memory for a whole claimed batch from schedules read in one statement per environment
 * (`loadSchedulesForStarts`):
 * - `pending_booking`: `confirmed` when the schedule still offers `start_time`, else `booking_failed`;
 * - `pending_reschedule`: `rescheduled` when it offers `pending_start_time`, else `reschedule_failed`;
 * - a move the `BookingOutcomePolicy` forces to fail fails whatever the schedule says;
 * - a row in any other status is `skipped` (it is no longer due).
 * "Offered" is `isScheduledStart`'s answer (the provider-location active, the start one its schedule
 * offers at `now`), computed by `offersStartAmong` on exactly the data `isScheduledStart` would read.
 * A row whose decision throws is an `error` (the evaluator sets it aside); the rest are unaffected.
 */
import type { Selectable } from 'kysely';
import type { AppointmentsTable, Env } from '../../db/schema.js';
import { offersStartAmong } from '../availability/scheduled-start.js';
import type { LocalClock } from '../scheduling/local-time.js';
import type { SchedulesForStarts, StartQuery } from '../scheduling/schedule-for-starts.js';
import type { BookingOutcomePolicy, EvaluatedMove } from './outcome-policy.js';
import type { ServiceMove } from './service-moves.js';

/** What the evaluator claims of a due appointment (src/domain/appointments/evaluator.ts). */
export type DueAppointment = Pick<
  Selectable<AppointmentsTable>,
  | 'id' | 'env' | 'developer_id' | 'appointment_status' | 'confirmation_type' | 'provider_location_id' | 'visit_reason_id' | 'patient_type'
  | 'start_time' | 'end_time' | 'pending_start_time' | 'pending_end_time'
>;

export type Decision =
  | { row: DueAppointment; outcome: ServiceMove | 'skipped' }
  | { row: DueAppointment; outcome: 'error'; error: unknown };

/** The move a row's status asks for and the start time it is about; undefined when the row is not pending. */
function moveOf(row: DueAppointment): { move: EvaluatedMove; start: Date | null } | undefined {
  if (row.appointment_status === 'pending_booking') return { move: 'booking', start: row.start_time };
  if (row.appointment_status === 'pending_reschedule') return { move: 'reschedule', start: row.pending_start_time };
  return undefined;
}

/** The start times whose schedule the decisions need, by environment (moves forced to fail need none). */
export function startsToCheck(rows: DueAppointment[], outcomes: BookingOutcomePolicy): Map<Env, StartQuery[]> {
  const out = new Map<Env, StartQuery[]>();
  for (const row of rows) {
    const m = moveOf(row);
    if (!m || m.start === null || outcomes.forcedOutcome(row.provider_location_id, m.move) === 'fail') continue;
    let list = out.get(row.env);
    if (!list) out.set(row.env, (list = []));
    list.push({ providerLocationId: row.provider_location_id, visitReasonId: row.visit_reason_id, startMs: m.start.getTime() });
  }
  return out;
}

/**
 * Decides every row (see the module comment). `schedules` must hold, for each environment, the
 * schedules of `startsToCheck(rows, outcomes)`.
 */
export function decideMoves(
  rows: DueAppointment[],
  schedules: Map<Env, SchedulesForStarts>,
  opts: { now: Date; outcomes: BookingOutcomePolicy; clock: LocalClock },
): Decision[] {
  return rows.map((row): Decision => {
    try {
      const m = moveOf(row);
      if (!m) return { row, outcome: 'skipped' };
      const forcedFail = opts.outcomes.forcedOutcome(row.provider_location_id, m.move) === 'fail';
      const ok = !forcedFail && offered(row, m.start, schedules.get(row.env), opts);
      if (m.move === 'booking') return { row, outcome: ok ? 'confirmed' : 'booking_failed' };
      return { row, outcome: ok ? 'rescheduled' : 'reschedule_failed' };
    } catch (error) {
      return { row, outcome: 'error', error };
    }
  });
}

function offered(row: DueAppointment, start: Date | null, s: SchedulesForStarts | undefined, opts: { now: Date; clock: LocalClock }): boolean {
  const pl = s?.pls.get(row.provider_location_id);
  if (!s || !pl?.active || start === null) return false;
  return offersStartAmong(s.data, pl, { visitReasonId: row.visit_reason_id, patientType: row.patient_type, startMs: start.getTime(), now: opts.now }, opts.clock);
}
