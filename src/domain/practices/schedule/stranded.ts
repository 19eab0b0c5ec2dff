/**
 * Stranded bookings (docs/scheduling.md, "Stranded bookings"): live appointments that a schedule
 * change would leave outside open time, and the one transaction every schedule change runs in:
 * lock the provider's schedule, write, list what the change strands, then answer the list without
 * saving (`dryRun`), refuse with `conflict` (stranded, not `allowStranded`) or commit.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { AppointmentStatus, Database, Env } from '../../../db/schema.js';
import { inTransaction } from '../../appointments/transactions.js';
import { LIVE_STATUSES } from '../../appointments/states.js';
import { isOpenTime } from '../../availability/open-time.js';
import { DomainError } from '../../errors.js';
import { LocalClock, DAY_MS } from '../../scheduling/local-time.js';
import { loadScheduleData, type SlotSource } from '../../scheduling/schedule-data.js';
import { lockProviderSchedule } from './scope.js';

/** A live appointment outside open time; no patient data. */
export interface StrandedAppointment {
  appointment_id: string;
  provider_location_id: string;
  /** The stranded time's start, with the location's UTC offset (the pending time of a reschedule when that is the one stranded). */
  start_time: string;
  status: AppointmentStatus;
}

/** Upcoming live appointments of `pls` (ending after `now`) whose current or pending time lies outside open time, by start. */
export async function strandedAppointments(
  db: Kysely<Database>,
  env: Env,
  pls: Map<string, SlotSource>,
  now: Date,
  clock = new LocalClock(),
): Promise<StrandedAppointment[]> {
  if (pls.size === 0) return [];
  const rows = await db
    .selectFrom('appointments')
    .select(['id', 'provider_location_id', 'start_time', 'end_time', 'pending_start_time', 'pending_end_time', 'appointment_status', 'visit_reason_id', 'patient_type'])
    .where('env', '=', env)
    .where('provider_location_id', '=', sql<string>`ANY(${[...pls.keys()]}::text[])`)
    .where('appointment_status', 'in', LIVE_STATUSES)
    .where((eb) => eb.or([eb('end_time', '>', now), eb('pending_end_time', '>', now)]))
    .orderBy('start_time')
    .execute();
  if (rows.length === 0) return [];
  const times = rows.flatMap((r) => [r.start_time, r.end_time, r.pending_start_time, r.pending_end_time].filter((d): d is Date => d !== null).map((d) => new Date(d).getTime()));
  const data = await loadScheduleData(
    db, env, pls,
    { fromMs: Math.min(...times) - DAY_MS, toMs: Math.max(...times) + DAY_MS },
    { withHolds: false, visitReasonIds: [] },
  );
  const out: StrandedAppointment[] = [];
  for (const r of rows) {
    const pl = pls.get(r.provider_location_id)!;
    const ranges: [Date, Date][] = [[r.start_time, r.end_time]];
    if (r.pending_start_time && r.pending_end_time) ranges.push([r.pending_start_time, r.pending_end_time]);
    for (const [s, e] of ranges) {
      const startMs = new Date(s).getTime();
      const endMs = new Date(e).getTime();
      if (endMs <= now.getTime()) continue;
      if (isOpenTime(pl, data, clock, { startMs, endMs, visitReasonId: r.visit_reason_id, patientType: r.patient_type })) continue;
      out.push({ appointment_id: r.id, provider_location_id: r.provider_location_id, start_time: clock.format(pl.timeZone, startMs), status: r.appointment_status });
      break;
    }
  }
  return out;
}

/** The `conflict` refusing a change that strands `list`: one error per appointment (id, start, status). */
export function strandedConflict(list: StrandedAppointment[]): DomainError {
  return new DomainError(
    'conflict',
    list.map((a, i) => ({
      field: `stranded[${i}]`,
      message: `appointment ${a.appointment_id} (${a.status}) at ${a.start_time} would be outside open time; send "allow_stranded": true to save anyway`,
    })),
  );
}

/** How a schedule change ended. */
export interface ScheduleChangeOutcome<T> {
  /** False for a dry run. */
  saved: boolean;
  /** What the write returned (a dry run's too: nothing of it was kept). */
  result: T;
  stranded: StrandedAppointment[];
}

class DryRunEnd<T> {
  constructor(readonly result: T, readonly stranded: StrandedAppointment[]) {}
}

/**
 * Runs one schedule change of `providerId` touching `pls` (docs/scheduling.md): in one transaction,
 * takes the provider's schedule lock first (so a booking either committed before, and is seen here,
 * or waits and then finds the new schedule), runs `write`, lists the appointments it strands (live,
 * upcoming, in open time before `write` and outside it after), then
 * rolls back for `dryRun`, throws `strandedConflict` when some are stranded without
 * `allowStranded`, or commits and drops the stored availability summaries of `pls` (listings
 * compute them again on their next read).
 */
export async function scheduleChange<T>(
  db: Kysely<Database>,
  input: { env: Env; providerId: string; pls: Map<string, SlotSource>; now?: Date; dryRun?: boolean; allowStranded?: boolean },
  write: (trx: Transaction<Database>) => Promise<T>,
): Promise<ScheduleChangeOutcome<T>> {
  const now = input.now ?? new Date();
  try {
    return await inTransaction(db, async (trx) => {
      await lockProviderSchedule(trx, input.env, input.providerId);
      // Only what this change strands: appointments already outside open time (an earlier change
      // saved with allowStranded) do not refuse every later change.
      const already = new Set((await strandedAppointments(trx, input.env, input.pls, now)).map((a) => a.appointment_id));
      const result = await write(trx);
      const stranded = (await strandedAppointments(trx, input.env, input.pls, now)).filter((a) => !already.has(a.appointment_id));
      if (input.dryRun) throw new DryRunEnd(result, stranded);
      if (stranded.length > 0 && !input.allowStranded) throw strandedConflict(stranded);
      if (input.pls.size > 0) {
        await trx.deleteFrom('availability_summaries').where('env', '=', input.env)
          .where('provider_location_id', '=', sql<string>`ANY(${[...input.pls.keys()]}::text[])`).execute();
      }
      return { saved: true, result, stranded };
    });
  } catch (e) {
    if (e instanceof DryRunEnd) return { saved: false, result: e.result as T, stranded: e.stranded };
    throw e;
  }
}
