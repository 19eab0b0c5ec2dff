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
import { heldTimeFromSql } from '../../scheduling/held-time-sql.js';
import { LocalClock, DAY_MS } from '../../scheduling/local-time.js';
import { loadScheduleData, type SlotSource } from '../../scheduling/schedule-data.js';
import { effectiveDuration } from '../../scheduling/visit-reason-durations.js';
import { auditScheduleChange, type ScheduleAudit } from './audit.js';
import { lockProviderSchedule, type PracticeCaller } from './scope.js';

/**
 * Why a booking is stranded: its time is outside open time (at its visit reason's effective length
 * when that is longer than booked), that length would run into the provider's next booking, or the
 * practice no longer offers its visit reason there (docs/decisions/0019-practice-visit-reasons.md).
 */
export type StrandedReason = 'outside_open_time' | 'overlaps_next_booking' | 'visit_reason_not_offered';

/** A live appointment outside open time; no patient data. */
export interface StrandedAppointment {
  appointment_id: string;
  provider_location_id: string;
  /** The stranded time's start, with the location's UTC offset (the pending time of a reschedule when that is the one stranded). */
  start_time: string;
  status: AppointmentStatus;
  reason: StrandedReason;
}

/** Held ranges of `providerIds` in the window, with the appointment holding each (own holds are not "the next booking"). */
async function heldRanges(db: Kysely<Database>, env: Env, providerIds: string[], fromMs: number, toMs: number): Promise<{ id: string; provider: string; s: number; e: number }[]> {
  const { rows } = await sql<{ appointment_id: string; provider_id: string; s: Date; e: Date }>`
    SELECT h.appointment_id, hp.provider_id, lower(h.during) AS s, upper(h.during) AS e
    FROM ${heldTimeFromSql(env, sql`${providerIds}::text[]`, new Date(fromMs), new Date(toMs))}`.execute(db);
  return rows.map((r) => ({ id: r.appointment_id, provider: r.provider_id, s: new Date(r.s).getTime(), e: new Date(r.e).getTime() }));
}

/**
 * Upcoming live appointments of `pls` (ending after `now`) whose current or pending time lies outside
 * open time, by start. A booking is looked at for the length its visit reason now has there
 * (`effectiveDuration`) when that is longer than booked: that length must fit open time and not run
 * into another booking of the provider; a reason the practice no longer offers there strands it.
 */
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
    { withHolds: false, visitReasonIds: [...new Set(rows.map((r) => r.visit_reason_id))] },
  );
  let held: Awaited<ReturnType<typeof heldRanges>> | undefined;
  const out: StrandedAppointment[] = [];
  for (const r of rows) {
    const pl = pls.get(r.provider_location_id)!;
    const ranges: [Date, Date][] = [[r.start_time, r.end_time]];
    if (r.pending_start_time && r.pending_end_time) ranges.push([r.pending_start_time, r.pending_end_time]);
    const minutes = effectiveDuration(data, pl.id, r.visit_reason_id, r.patient_type);
    for (const [s, e] of ranges) {
      const startMs = new Date(s).getTime();
      const endMs = new Date(e).getTime();
      if (endMs <= now.getTime()) continue;
      const lengthEnd = minutes === undefined ? endMs : startMs + clock.durationMs(minutes);
      let reason: StrandedReason | undefined;
      if (minutes === undefined && data.durations.has(r.visit_reason_id)) reason = 'visit_reason_not_offered';
      else if (!isOpenTime(pl, data, clock, { startMs, endMs: Math.max(endMs, lengthEnd), visitReasonId: r.visit_reason_id, patientType: r.patient_type })) reason = 'outside_open_time';
      else if (lengthEnd > endMs) {
        held ??= await heldRanges(db, env, [...new Set([...pls.values()].map((p) => p.providerId))], Math.min(...times), Math.max(...times) + DAY_MS);
        if (held.some((h) => h.provider === pl.providerId && h.id !== r.id && h.s < lengthEnd && h.e > endMs)) reason = 'overlaps_next_booking';
      }
      if (!reason) continue;
      out.push({ appointment_id: r.id, provider_location_id: r.provider_location_id, start_time: clock.format(pl.timeZone, startMs), status: r.appointment_status, reason });
      break;
    }
  }
  return out;
}

const STRANDED_WHY: Record<StrandedReason, string> = {
  outside_open_time: 'would be outside open time',
  overlaps_next_booking: "would, at its visit reason's new length, run into the provider's next booking",
  visit_reason_not_offered: 'is for a visit reason no longer offered there',
};

/** The `conflict` refusing a change that strands `list`: one error per appointment (id, start, status). */
export function strandedConflict(list: StrandedAppointment[]): DomainError {
  return new DomainError(
    'conflict',
    list.map((a, i) => ({
      field: `stranded[${i}]`,
      message: `appointment ${a.appointment_id} (${a.status}) at ${a.start_time} ${STRANDED_WHY[a.reason]}; send "allow_stranded": true to save anyway`,
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
 * `allowStranded`, or writes its audit row (`audit`), marks the stored availability summaries of `pls`
 * as old (never served again; listings compute them on their next read until the refresher has
 * written them anew) and commits.
 */
export async function scheduleChange<T>(
  db: Kysely<Database>,
  input: {
    env: Env; providerId: string; pls: Map<string, SlotSource>; now?: Date; dryRun?: boolean; allowStranded?: boolean;
    /** Who saves it, and its audit row (written when it is saved; `subjectOf` names the saved object). */
    audit?: { caller: PracticeCaller; entry: Omit<ScheduleAudit, 'subjectId'>; subjectOf?: (result: T) => string | null };
  },
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
      if (input.audit) await auditScheduleChange(trx, input.audit.caller, { ...input.audit.entry, subjectId: input.audit.subjectOf?.(result) ?? null });
      if (input.pls.size > 0) {
        // The stored summaries are of the schedule before the change: marked as old as can be, never
        // served again, and first in the refresher's next listing of old rows (summary-refresh.ts).
        await trx.updateTable('availability_summaries').set({ computed_at: sql<Date>`'-infinity'::timestamptz` }).where('env', '=', input.env)
          .where('provider_location_id', '=', sql<string>`ANY(${[...input.pls.keys()]}::text[])`).execute();
      }
      return { saved: true, result, stranded };
    });
  } catch (e) {
    if (e instanceof DryRunEnd) return { saved: false, result: e.result as T, stranded: e.stranded };
    throw e;
  }
}
