/**
 * Bookable start times: the one slot computation of the service (docs/api/availability.md,
 * "Where bookable times come from"). The availability endpoint (`slot-lists.ts`), booking checks
 * and the evaluator (`scheduled-start.ts`) and the directory's summaries (`summaries.ts`) all use
 * `walkSlots`, so they cannot disagree.
 *
 * A provider-location's slots come from its weekly schedule blocks (each block split into
 * back-to-back slots of the visit reason's effective duration for the patient type (the practice's
 * override at this provider-location, else the directory's; none where the practice does not offer
 * it: docs/decisions/0019-practice-visit-reasons.md), stepping in real elapsed
 * time from the block's start to its end, so a block that spans a daylight-saving change yields
 * correct instants with their own offsets and never a non-existent or duplicated time) and from
 * calendar timeslots pushed with the calendar PUT (excluded visit reasons beat allowed ones; no
 * patient type means both). A slot `[start, start + duration)` is offered when it starts after
 * `now`, within `BOOKING_HORIZON_DAYS`, the provider accepts the visit reason, and it overlaps none
 * of the provider's held time (any location) nor its time off (docs/scheduling.md, "Time off").
 * Start times are rendered with the provider's own UTC offset.
 *
 * `walkSlots` works on loaded data (`loadScheduleData`, src/domain/scheduling/schedule-data.ts) and
 * yields one local day at a time, so a caller that needs only the first slots (first availability,
 * directory summaries) stops walking as soon as its answer is known. It formats nothing:
 * `formatSlot` renders a start time.
 */
import type { PatientType } from '../patient-type.js';
import { minutesMs, type LocalClock } from '../scheduling/local-time.js';
import type { PushedSlot, ScheduleData, SlotSource, WeeklyBlock } from '../scheduling/schedule-data.js';
import { effectiveDuration } from '../scheduling/visit-reason-durations.js';
import { overlapsAny, timeOffRanges } from './open-time.js';

/**
 * How far ahead a slot can be booked or listed (days after now): no slot starting later is offered
 * by the availability endpoint, accepted by booking or rescheduling, or seen by first availability.
 * 150 is the published limit (docs/api/conventions.md, "Limits"): about five months of calendar.
 */
export const BOOKING_HORIZON_DAYS = 150;
/** Longest visit reason duration the schema admits, in minutes (holds are loaded this far past the window). */
export const MAX_DURATION_MINUTES = 480;

/** The last instant (epoch ms) a slot may start at, `BOOKING_HORIZON_DAYS` after `nowMs`. */
export function bookingHorizonEndMs(nowMs: number): number {
  return nowMs + minutesMs(BOOKING_HORIZON_DAYS * 24 * 60);
}

/** A bookable slot as computed (no text). */
export interface Slot {
  /** Epoch milliseconds of the start. */
  startMs: number;
  /** The zone's UTC offset (minutes) at the start when already known (a block without a DST change); else undefined. */
  offset: number | undefined;
  visitReasonId: string;
  durationMinutes: number;
}

export interface Timeslot {
  /** Epoch milliseconds of the start. */
  startMs: number;
  /** ISO-8601 with the provider's own UTC offset. */
  startTime: string;
  visitReasonId: string;
  durationMinutes: number;
}

/** The slots of one local date of a provider-location, sorted by start then visit reason. */
export interface DaySlots {
  /** Local date in the provider-location's zone. */
  date: string;
  /** The day's first instant. */
  startMs: number;
  slots: Slot[];
}

/** What `walkSlots` walks. */
export interface SlotWalk {
  /** First and last local date (inclusive) in the provider-location's zone. */
  from: string;
  to: string;
  patientType: PatientType;
  /** Only this visit reason; omitted: every visit reason the provider accepts. */
  visitReasonId?: string | undefined;
  /** Slots must start after this instant … */
  nowMs: number;
  /** … and at or before this one (days starting after it are not walked). */
  lastStartMs: number;
  /** True: the schedule alone, held time ignored. */
  ignoreHolds?: boolean;
  /**
   * For visit reasons other than this one, only the first free start of each schedule block is
   * yielded (pushed slots are all yielded). For callers that need every slot of one visit reason
   * and only the first slot of the others (directory summaries); it saves most of the work.
   */
  firstOfBlockExcept?: string | undefined;
  /** Asked before each day is computed; true ends the walk (early stopping). */
  stopBefore?: (day: { date: string; startMs: number }) => boolean;
}

const overlapsHold = overlapsAny;

const bySlotOrder = (a: Slot, b: Slot): number =>
  a.startMs - b.startMs || (a.visitReasonId < b.visitReasonId ? -1 : a.visitReasonId > b.visitReasonId ? 1 : 0);

/**
 * The one slot computation: the bookable slots of provider-location `pl` (its data loaded into
 * `data` by `loadScheduleData` over a window covering the walk), one local day at a time from
 * `walk.from` to `walk.to`. Each yielded day holds that date's slots, deduplicated and sorted by
 * start then visit reason. Stop consuming (or return true from `walk.stopBefore`) to stop early.
 */
export function* walkSlots(pl: SlotSource, data: ScheduleData, clock: LocalClock, walk: SlotWalk): Generator<DaySlots> {
  const pt = walk.patientType;
  const reasons = walk.visitReasonId ? (pl.visitReasonIds.includes(walk.visitReasonId) ? [walk.visitReasonId] : []) : pl.visitReasonIds;
  const durations: { reason: string; minutes: number; stepMs: number; all: boolean }[] = [];
  for (const r of reasons) {
    const d = effectiveDuration(data, pl.id, r, pt);
    if (d) durations.push({ reason: r, minutes: d, stepMs: clock.durationMs(d), all: walk.firstOfBlockExcept === undefined || walk.firstOfBlockExcept === r });
  }
  if (durations.length === 0) return;
  // Blocks by ISO weekday; pushed slots by local date.
  const blocksByWeekday: WeeklyBlock[][] = [[], [], [], [], [], [], [], []];
  let anyBlock = false;
  for (const b of data.blocks.get(pl.id) ?? []) {
    if (b.patientType !== null && b.patientType !== pt) continue;
    blocksByWeekday[b.weekday]?.push(b);
    anyBlock = true;
  }
  const pushedByDate = new Map<string, PushedSlot[]>();
  for (const p of data.pushed.get(pl.id) ?? []) {
    if (p.patientType !== null && p.patientType !== pt) continue;
    let list = pushedByDate.get(p.localDate);
    if (!list) pushedByDate.set(p.localDate, (list = []));
    list.push(p);
  }
  if (!anyBlock && pushedByDate.size === 0) return;
  const holds = walk.ignoreHolds ? undefined : data.holds.get(pl.providerId);
  // Time off closes the provider-location whether or not held time is asked about (docs/scheduling.md).
  const off = timeOffRanges(pl, data, clock);
  const closed = off.length > 0 ? off : undefined;
  const zone = pl.timeZone;
  const { nowMs, lastStartMs } = walk;

  for (let date = walk.from; date <= walk.to; date = clock.day(date).next) {
    const dayStart = clock.startOfDay(zone, date);
    if (dayStart > lastStartMs) return;
    if (walk.stopBefore?.({ date, startMs: dayStart })) return;
    const slots: Slot[] = [];
    for (const b of blocksByWeekday[clock.day(date).weekday]!) {
      const startPoint = clock.point(zone, date, b.startMin);
      const endPoint = clock.point(zone, date, b.endMin);
      const blockEnd = endPoint.ms;
      // Same offset at both ends: no daylight-saving change inside the block.
      const offset = startPoint.offset === endPoint.offset ? startPoint.offset : undefined;
      for (const d of durations) {
        if (b.visitReasonIds && !b.visitReasonIds.includes(d.reason)) continue;
        for (let s = startPoint.ms; s + d.stepMs <= blockEnd; s += d.stepMs) {
          if (s <= nowMs || s > lastStartMs || (holds && overlapsHold(holds, s, s + d.stepMs)) || (closed && overlapsAny(closed, s, s + d.stepMs))) continue;
          slots.push({ startMs: s, offset, visitReasonId: d.reason, durationMinutes: d.minutes });
          if (!d.all) break;
        }
      }
    }
    for (const p of pushedByDate.get(date) ?? []) {
      if (p.startMs <= nowMs || p.startMs > lastStartMs) continue;
      for (const d of durations) {
        if (p.excluded?.includes(d.reason)) continue;
        if (p.allowed && p.allowed.length > 0 && !p.allowed.includes(d.reason)) continue;
        if (holds && overlapsHold(holds, p.startMs, p.startMs + d.stepMs)) continue;
        if (closed && overlapsAny(closed, p.startMs, p.startMs + d.stepMs)) continue;
        slots.push({ startMs: p.startMs, offset: undefined, visitReasonId: d.reason, durationMinutes: d.minutes });
      }
    }
    if (slots.length > 1) {
      slots.sort(bySlotOrder);
      // Overlapping blocks or a pushed slot at a scheduled time offer one (start, reason) once.
      let w = 1;
      for (let i = 1; i < slots.length; i++) {
        const s = slots[i]!;
        const prev = slots[w - 1]!;
        if (s.startMs !== prev.startMs || s.visitReasonId !== prev.visitReasonId) slots[w++] = s;
      }
      slots.length = w;
    }
    yield { date, startMs: dayStart, slots };
  }
}

/** The visit reasons whose durations a walk over `pls` needs (`loadScheduleData`'s `visitReasonIds`). */
export function reasonsOf(pls: Map<string, SlotSource>, visitReasonId?: string): string[] {
  return visitReasonId ? [visitReasonId] : [...new Set([...pls.values()].flatMap((p) => p.visitReasonIds))];
}

/** A slot with its start time rendered in the provider's own offset. */
export function formatSlot(clock: LocalClock, zone: string, s: Slot): Timeslot {
  return { startMs: s.startMs, startTime: clock.format(zone, s.startMs, s.offset), visitReasonId: s.visitReasonId, durationMinutes: s.durationMinutes };
}

