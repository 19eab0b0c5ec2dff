/**
 * What a move to a new time reads and checks, shared by a `/v1` reschedule (reschedule.ts) and a
 * practice's move (src/domain/practices/appointments/move.ts), both inside the move's transaction
 * after the appointment is locked: its provider-location and the visit reason's duration there
 * (`moveTarget`), then the one schedule check (`offeredUnderCalendarLock`), which first takes the
 * provider's `calendar_versions` row `FOR SHARE`; a schedule change of that provider (time off, weekly
 * hours) holds the row until it commits, so the check waits for it and then sees the schedule as it
 * is now (docs/scheduling.md, "Races").
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import type { FieldError } from '../errors.js';
import type { PatientType } from '../patient-type.js';
import { isScheduledStart } from '../availability/scheduled-start.js';
import type { LocalClock } from '../scheduling/local-time.js';
import { loadProviderLocations, type ProviderLocationContext, type SlotSource } from '../scheduling/schedule-data.js';
import { visitReasonDuration } from './create.js';

/** A move's provider-location and the visit's length there, or the `start_time` error that refuses it. */
export type MoveTarget = { ok: true; duration: number; pl: ProviderLocationContext } | { ok: false; error: FieldError };

/**
 * The provider-location of the appointment `current` (it must still take bookings, else an error on
 * `start_time`) and its visit reason's duration there for its patient type (an unknown or no longer
 * offered visit reason throws `invalid` on `durationField`).
 */
export async function moveTarget(
  db: Kysely<Database>,
  env: Env,
  current: { provider_location_id: string; visit_reason_id: string; patient_type: PatientType },
  durationField: string,
): Promise<MoveTarget> {
  const pl = (await loadProviderLocations(db, env, [current.provider_location_id])).get(current.provider_location_id);
  if (!pl?.active) return { ok: false, error: { field: 'start_time', message: 'the provider location no longer takes bookings' } };
  const duration = await visitReasonDuration(db, env, pl, current.visit_reason_id, current.patient_type, durationField);
  return { ok: true, duration, pl };
}

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
