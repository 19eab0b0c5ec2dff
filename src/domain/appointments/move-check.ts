/**
 * The one schedule check of a move to a new time, shared by a `/v1` reschedule (reschedule.ts) and a
 * practice's move (src/domain/practices/appointments/move.ts): made inside the move's transaction,
 * after the appointment is locked. It first takes the provider's `calendar_versions` row `FOR SHARE`;
 * a schedule change of that provider (time off, weekly hours) holds the row until it commits, so the
 * check waits for it and then sees the schedule as it is now (docs/scheduling.md, "Races").
 */
import { sql, type Transaction } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import type { PatientType } from '../patient-type.js';
import { isScheduledStart } from '../availability/scheduled-start.js';
import type { LocalClock } from '../scheduling/local-time.js';
import type { SlotSource } from '../scheduling/schedule-data.js';

/** Whether the schedule offers `startMs` to the locked appointment `row` at `pl`, under the provider's calendar row (see above). */
export async function offeredUnderCalendarLock(
  trx: Transaction<Database>,
  row: { env: Env; provider_id: string; visit_reason_id: string; patient_type: PatientType },
  pl: SlotSource,
  startMs: number,
  opts: { now: Date; clock: LocalClock },
): Promise<boolean> {
  await sql`SELECT 1 FROM calendar_versions WHERE env = ${row.env} AND provider_id = ${row.provider_id} FOR SHARE`.execute(trx);
  return isScheduledStart(trx, { env: row.env, pl, visitReasonId: row.visit_reason_id, patientType: row.patient_type, startMs, now: opts.now, clock: opts.clock });
}
