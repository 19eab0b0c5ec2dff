/**
 * Whether a start time is one the schedule offers (a booking's, a reschedule's or the evaluator's
 * `start_time`; docs/api/appointments.md, "Create an appointment"): the same slot computation as the
 * availability endpoint (`walkSlots`), over the start's local day alone, ignoring held time (whether
 * the time is still free is decided by the database's no-overlap constraint when the hold is inserted).
 * The evaluator asks the same question for a whole batch of starts read at once (`offersStartAmong`).
 */
import type { Kysely } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import type { PatientType } from '../patient-type.js';
import { LocalClock, minutesMs } from '../scheduling/local-time.js';
import { loadScheduleData, timeOffDates, type ScheduleData, type SlotSource } from '../scheduling/schedule-data.js';
import { bookingHorizonEndMs, MAX_DURATION_MINUTES, walkSlots } from './slots.js';

/**
 * True when `startMs` is a start time the schedule offers for this provider-location, visit reason
 * and patient type at `now`, ignoring held time (see the module comment).
 */
export async function isScheduledStart(
  db: Kysely<Database>,
  input: { env: Env; pl: SlotSource; visitReasonId: string; patientType: PatientType; startMs: number; now?: Date; clock?: LocalClock },
): Promise<boolean> {
  const clock = input.clock ?? new LocalClock();
  const { pl } = input;
  const data = await loadScheduleData(db, input.env, new Map([[pl.id, pl]]), startWindow(clock, pl.timeZone, input.startMs), {
    withHolds: false,
    visitReasonIds: [input.visitReasonId],
  });
  return offersStart(data, pl, { ...input, now: input.now ?? new Date() }, clock);
}

/**
 * The UTC window whose schedule decides whether a start is offered (`isScheduledStart` loads it): the
 * start's local day in `zone`, and the longest visit past that day's end.
 */
export function startWindow(clock: LocalClock, zone: string, startMs: number): { fromMs: number; toMs: number } {
  const date = clock.localDate(zone, startMs);
  return { fromMs: clock.startOfDay(zone, date), toMs: clock.startOfDay(zone, clock.day(date).next) + minutesMs(MAX_DURATION_MINUTES) };
}

/**
 * `isScheduledStart` on data loaded for many starts at once (the evaluator's batch:
 * `loadSchedulesForStarts`, src/domain/scheduling/schedule-for-starts.ts): of `pl`'s calendar
 * timeslots and its provider's time off in `data`, only what `isScheduledStart` itself loads for this
 * start (`startWindow`, `timeOffDates`) is looked at, so the answer is the same as `isScheduledStart`'s.
 */
export function offersStartAmong(
  data: ScheduleData,
  pl: SlotSource,
  q: { visitReasonId: string; patientType: PatientType; startMs: number; now: Date },
  clock: LocalClock,
): boolean {
  const window = startWindow(clock, pl.timeZone, q.startMs);
  const { fromDate, toDate } = timeOffDates(window);
  const pushed = (data.pushed.get(pl.id) ?? []).filter((p) => p.startMs >= window.fromMs && p.startMs < window.toMs);
  const timeOff = (data.timeOff.get(pl.providerId) ?? []).filter((t) => t.startDate <= toDate && t.endDate >= fromDate);
  const view: ScheduleData = { ...data, pushed: new Map([[pl.id, pushed]]), holds: new Map(), timeOff: new Map([[pl.providerId, timeOff]]) };
  return offersStart(view, pl, q, clock);
}

/**
 * `isScheduledStart` on data already loaded (`data` must hold `pl`'s weekly blocks, the visit
 * reason's durations and the calendar timeslots of the start's local day): walks that one local day.
 */
export function offersStart(
  data: ScheduleData,
  pl: SlotSource,
  q: { visitReasonId: string; patientType: PatientType; startMs: number; now: Date },
  clock: LocalClock,
): boolean {
  const date = clock.localDate(pl.timeZone, q.startMs);
  const nowMs = q.now.getTime();
  const walk = walkSlots(pl, data, clock, {
    from: date,
    to: date,
    visitReasonId: q.visitReasonId,
    patientType: q.patientType,
    nowMs,
    lastStartMs: bookingHorizonEndMs(nowMs),
    ignoreHolds: true,
  });
  for (const day of walk) if (day.slots.some((s) => s.startMs === q.startMs)) return true;
  return false;
}
