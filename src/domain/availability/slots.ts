/**
 * Bookable start times (interface.md §4.16 availability, contracts.md §4 and §5): the one slot
 * computation of the service. The availability endpoint, booking checks, the evaluator and the
 * directory's summaries (`src/domain/directory/availability-summary.ts`) all use `walkSlots`, so
 * they cannot disagree.
 *
 * ```ts
 * computeAvailability(db: Kysely<Database>, {
 *   env: Env,
 *   providerLocationIds: string[],          // any number; unknown or inactive ids are absent from the result
 *   visitReasonId?: string,                 // omitted: every visit reason the provider accepts
 *   patientType: 'new' | 'existing',
 *   from?: string,                          // YYYY-MM-DD in each provider's zone; default: today there
 *   to?: string,                            // inclusive; default: from + 7 days
 *   now?: Date,                             // default: new Date()
 *   ignoreHolds?: boolean,                  // true: the schedule alone (booking checks use this)
 *   stopAfter?: number,                     // stop a provider-location after this many slots
 *   clock?: LocalClock,                     // share conversions across calls (e.g. one per app)
 * }): Promise<Map<string, ProviderLocationAvailability>>
 * ```
 *
 * A provider-location's slots come from its weekly schedule blocks (each block split into
 * back-to-back slots of the visit reason's duration for the patient type, stepping in real elapsed
 * time from the block's start to its end, so a block that spans a daylight-saving change yields
 * correct instants with their own offsets and never a non-existent or duplicated time) and from
 * calendar timeslots pushed with the calendar PUT (excluded visit reasons beat allowed ones; no
 * patient type means both). A slot `[start, start + duration)` is offered when it starts after
 * `now`, within 150 days, the provider accepts the visit reason, and it overlaps none of the
 * provider's held time (any location). Start times are rendered with the provider's own UTC offset.
 *
 * The core, `walkSlots`, works on loaded data (`loadScheduleData`) and yields one local day at a
 * time, so a caller that needs only the first slots (first availability, directory summaries) stops
 * walking as soon as its answer is known. It formats nothing: `formatSlot` renders a start time.
 */
import type { Kysely } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import { LocalClock, minutesMs } from '../scheduling/local-time.js';
import {
  loadProviderLocations,
  loadScheduleData,
  type PatientType,
  type PushedSlot,
  type ScheduleData,
  type SlotSource,
  type WeeklyBlock,
} from '../scheduling/schedule-data.js';

export type { PatientType } from '../scheduling/schedule-data.js';

/** Nothing is offered beyond this many days ahead (contracts.md §4). */
export const HORIZON_DAYS = 150;
/** Longest visit reason duration the schema admits, in minutes (holds are loaded this far past the window). */
export const MAX_DURATION_MINUTES = 480;

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

export interface ProviderLocationAvailability {
  providerLocationId: string;
  timeZone: string;
  /** Local dates actually covered (after defaults). */
  from: string;
  to: string;
  slots: Timeslot[];
}

export interface AvailabilityQuery {
  env: Env;
  providerLocationIds: string[];
  visitReasonId?: string;
  patientType: PatientType;
  from?: string;
  to?: string;
  now?: Date;
  ignoreHolds?: boolean;
  stopAfter?: number;
  /** A shared memo of local-time conversions (deterministic, so safe to reuse across requests). */
  clock?: LocalClock;
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

function overlapsHold(holds: [number, number][] | undefined, start: number, end: number): boolean {
  if (!holds) return false;
  for (const [s, e] of holds) {
    if (s >= end) return false;
    if (e > start) return true;
  }
  return false;
}

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
    const d = data.durations.get(r)?.[pt];
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
          if (s <= nowMs || s > lastStartMs || (holds && overlapsHold(holds, s, s + d.stepMs))) continue;
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

/** A slot with its start time rendered in the provider's own offset. */
export function formatSlot(clock: LocalClock, zone: string, s: Slot): Timeslot {
  return { startMs: s.startMs, startTime: clock.format(zone, s.startMs, s.offset), visitReasonId: s.visitReasonId, durationMinutes: s.durationMinutes };
}

/** Bookable slots per provider-location; see the module comment for the rules and the signature. */
export async function computeAvailability(db: Kysely<Database>, q: AvailabilityQuery): Promise<Map<string, ProviderLocationAvailability>> {
  const all = await loadProviderLocations(db, q.env, [...new Set(q.providerLocationIds)]);
  return availabilityOf(db, new Map([...all].filter(([, p]) => p.active)), q);
}

/** `computeAvailability` for provider-locations already loaded with `loadProviderLocations` (active ones). */
export async function availabilityOf(
  db: Kysely<Database>,
  pls: Map<string, SlotSource>,
  q: Omit<AvailabilityQuery, 'providerLocationIds'>,
): Promise<Map<string, ProviderLocationAvailability>> {
  const now = q.now ?? new Date();
  const clock = q.clock ?? new LocalClock();
  const out = new Map<string, ProviderLocationAvailability>();
  if (pls.size === 0) return out;

  // Per provider-location local window, and the UTC window covering all of them.
  const windows = new Map<string, { from: string; to: string }>();
  let minMs = Infinity;
  let maxMs = -Infinity;
  for (const pl of pls.values()) {
    const from = q.from ?? clock.today(pl.timeZone, now);
    const to = q.to ?? clock.addDays(from, 7);
    windows.set(pl.id, { from, to });
    minMs = Math.min(minMs, clock.startOfDay(pl.timeZone, from));
    maxMs = Math.max(maxMs, clock.startOfDay(pl.timeZone, clock.day(to).next));
  }
  const data = await loadScheduleData(
    db,
    q.env,
    pls,
    { fromMs: minMs, toMs: maxMs + minutesMs(MAX_DURATION_MINUTES) },
    { withHolds: !q.ignoreHolds, visitReasonIds: reasonsOf(pls, q.visitReasonId) },
  );
  const nowMs = now.getTime();
  const lastStartMs = nowMs + minutesMs(HORIZON_DAYS * 24 * 60);
  for (const pl of pls.values()) {
    const w = windows.get(pl.id)!;
    const slots: Timeslot[] = [];
    const walk = walkSlots(pl, data, clock, {
      ...w,
      visitReasonId: q.visitReasonId,
      patientType: q.patientType,
      nowMs,
      lastStartMs,
      ignoreHolds: !!q.ignoreHolds,
      ...(q.stopAfter !== undefined ? { stopBefore: () => slots.length >= q.stopAfter! } : {}),
    });
    for (const day of walk) for (const s of day.slots) slots.push(formatSlot(clock, pl.timeZone, s));
    out.set(pl.id, { providerLocationId: pl.id, timeZone: pl.timeZone, ...w, slots: q.stopAfter !== undefined ? slots.slice(0, q.stopAfter) : slots });
  }
  return out;
}

/** The visit reasons whose durations a computation needs. */
export function reasonsOf(pls: Map<string, SlotSource>, visitReasonId?: string): string[] {
  return visitReasonId ? [visitReasonId] : [...new Set([...pls.values()].flatMap((p) => p.visitReasonIds))];
}

/**
 * True when `startMs` is a start time the schedule offers for this provider-location, visit reason
 * and patient type at `now` (interface.md §2.1 `data.start_time`), ignoring held time: whether the
 * time is still free is decided by the database's no-overlap constraint when the hold is inserted.
 */
export async function isScheduledStart(
  db: Kysely<Database>,
  input: { env: Env; pl: SlotSource; visitReasonId: string; patientType: PatientType; startMs: number; now?: Date; clock?: LocalClock },
): Promise<boolean> {
  const clock = input.clock ?? new LocalClock();
  const { pl } = input;
  const date = clock.localDate(pl.timeZone, input.startMs);
  const data = await loadScheduleData(
    db,
    input.env,
    new Map([[pl.id, pl]]),
    { fromMs: clock.startOfDay(pl.timeZone, date), toMs: clock.startOfDay(pl.timeZone, clock.day(date).next) + minutesMs(MAX_DURATION_MINUTES) },
    { withHolds: false, visitReasonIds: [input.visitReasonId] },
  );
  return offersStart(data, pl, { ...input, now: input.now ?? new Date() }, clock);
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
    lastStartMs: nowMs + minutesMs(HORIZON_DAYS * 24 * 60),
    ignoreHolds: true,
  });
  for (const day of walk) if (day.slots.some((s) => s.startMs === q.startMs)) return true;
  return false;
}

/**
 * The first bookable slot per provider-location from local date `from` (default today) up to
 * `days` days after today (local dates, inclusive), any visit reason when `visitReasonId` is
 * omitted: `first_availability` of the availability endpoint. One data load, then each
 * provider-location's days are walked until the first day with a slot.
 */
export async function firstAvailability(
  db: Kysely<Database>,
  input: { env: Env; providerLocationIds: string[]; visitReasonId?: string; patientType: PatientType; from?: string; now?: Date; days?: number; clock?: LocalClock },
): Promise<Map<string, Timeslot>> {
  const now = input.now ?? new Date();
  const clock = input.clock ?? new LocalClock();
  const days = input.days ?? 90;
  const found = new Map<string, Timeslot>();
  const loaded = await loadProviderLocations(db, input.env, [...new Set(input.providerLocationIds)]);
  const pls = new Map([...loaded].filter(([, p]) => p.active));
  const windows = new Map<string, { from: string; to: string }>();
  let minMs = Infinity;
  let maxMs = -Infinity;
  for (const pl of pls.values()) {
    const today = clock.today(pl.timeZone, now);
    const w = { from: input.from && input.from > today ? input.from : today, to: clock.addDays(today, days) };
    if (w.from > w.to) continue;
    windows.set(pl.id, w);
    minMs = Math.min(minMs, clock.startOfDay(pl.timeZone, w.from));
    maxMs = Math.max(maxMs, clock.startOfDay(pl.timeZone, clock.day(w.to).next));
  }
  if (windows.size === 0) return found;
  const data = await loadScheduleData(
    db,
    input.env,
    pls,
    { fromMs: minMs, toMs: maxMs + minutesMs(MAX_DURATION_MINUTES) },
    { withHolds: true, visitReasonIds: reasonsOf(pls, input.visitReasonId) },
  );
  const nowMs = now.getTime();
  const lastStartMs = nowMs + minutesMs(HORIZON_DAYS * 24 * 60);
  for (const [id, w] of windows) {
    const pl = pls.get(id)!;
    for (const day of walkSlots(pl, data, clock, { ...w, visitReasonId: input.visitReasonId, patientType: input.patientType, nowMs, lastStartMs })) {
      const first = day.slots[0];
      if (first) {
        found.set(id, formatSlot(clock, pl.timeZone, first));
        break;
      }
    }
  }
  return found;
}
