/**
 * Bookable start times (interface.md §4.16 availability, contracts.md §4 and §5).
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
 *   stopAfter?: number,                     // stop a provider-location after this many slots (summaries)
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
 */
import type { Kysely } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import { LocalClock, minutesMs } from './local-time.js';
import { loadProviderLocations, loadScheduleData, type PatientType, type ProviderLocationContext, type ScheduleData } from './schedule-data.js';

export type { PatientType } from './schedule-data.js';

/** Nothing is offered beyond this many days ahead (contracts.md §4). */
export const HORIZON_DAYS = 150;
/** Longest visit reason duration the schema admits, in minutes (holds are loaded this far past the window). */
const MAX_DURATION_MINUTES = 480;

export interface Timeslot {
  /** Epoch milliseconds of the start. */
  startMs: number;
  /** ISO-8601 with the provider's own UTC offset. */
  startTime: string;
  visitReasonId: string;
  durationMinutes: number;
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

function overlapsHold(holds: [number, number][] | undefined, start: number, end: number): boolean {
  if (!holds) return false;
  for (const [s, e] of holds) {
    if (s >= end) return false;
    if (e > start) return true;
  }
  return false;
}

/** Bookable slots per provider-location; see the module comment for the rules and the signature. */
export async function computeAvailability(db: Kysely<Database>, q: AvailabilityQuery): Promise<Map<string, ProviderLocationAvailability>> {
  const all = await loadProviderLocations(db, q.env, [...new Set(q.providerLocationIds)]);
  return availabilityOf(db, new Map([...all].filter(([, p]) => p.active)), q);
}

/** `computeAvailability` for provider-locations already loaded with `loadProviderLocations` (active ones). */
export async function availabilityOf(
  db: Kysely<Database>,
  pls: Map<string, ProviderLocationContext>,
  q: Omit<AvailabilityQuery, 'providerLocationIds'>,
): Promise<Map<string, ProviderLocationAvailability>> {
  const now = q.now ?? new Date();
  const clock = q.clock ?? new LocalClock();
  const out = new Map<string, ProviderLocationAvailability>();
  if (pls.size === 0) return out;

  // Per provider-location local window, and the UTC window covering all of them.
  const windows = new Map<string, { from: string; to: string; fromMs: number; toMs: number }>();
  let minMs = Infinity;
  let maxMs = -Infinity;
  for (const pl of pls.values()) {
    const from = q.from ?? clock.today(pl.timeZone, now);
    const to = q.to ?? clock.addDays(from, 7);
    const fromMs = clock.startOfDay(pl.timeZone, from);
    const toMs = clock.startOfDay(pl.timeZone, clock.day(to).next);
    windows.set(pl.id, { from, to, fromMs, toMs });
    minMs = Math.min(minMs, fromMs);
    maxMs = Math.max(maxMs, toMs);
  }
  const reasons = q.visitReasonId ? [q.visitReasonId] : [...new Set([...pls.values()].flatMap((p) => p.visitReasonIds))];
  const data = await loadScheduleData(
    db,
    q.env,
    pls,
    { fromMs: minMs, toMs: maxMs + minutesMs(MAX_DURATION_MINUTES) },
    { withHolds: !q.ignoreHolds, visitReasonIds: reasons },
  );
  const nowMs = now.getTime();
  const horizonMs = nowMs + minutesMs(HORIZON_DAYS * 24 * 60);
  for (const pl of pls.values()) {
    const w = windows.get(pl.id)!;
    const slots = slotsFor(pl, data, clock, {
      from: w.from,
      to: w.to,
      visitReasonId: q.visitReasonId,
      patientType: q.patientType,
      nowMs,
      horizonMs,
      ignoreHolds: !!q.ignoreHolds,
      stopAfter: q.stopAfter,
    });
    out.set(pl.id, { providerLocationId: pl.id, timeZone: pl.timeZone, from: w.from, to: w.to, slots });
  }
  return out;
}

interface SlotOptions {
  from: string;
  to: string;
  visitReasonId: string | undefined;
  patientType: PatientType;
  nowMs: number;
  horizonMs: number;
  ignoreHolds: boolean;
  stopAfter: number | undefined;
}

/** Slots of one provider-location over local dates `from..to`, sorted by start then visit reason. */
function slotsFor(pl: ProviderLocationContext, data: ScheduleData, clock: LocalClock, o: SlotOptions): Timeslot[] {
  const reasons = o.visitReasonId ? (pl.visitReasonIds.includes(o.visitReasonId) ? [o.visitReasonId] : []) : pl.visitReasonIds;
  const durations = new Map<string, number>();
  for (const r of reasons) {
    const d = data.durations.get(r)?.[o.patientType];
    if (d) durations.set(r, d);
  }
  if (durations.size === 0) return [];
  const blocks = (data.blocks.get(pl.id) ?? []).filter((b) => b.patientType === null || b.patientType === o.patientType);
  const pushed = (data.pushed.get(pl.id) ?? []).filter((s) => s.patientType === null || s.patientType === o.patientType);
  const holds = o.ignoreHolds ? undefined : data.holds.get(pl.providerId);
  const zone = pl.timeZone;
  const out: Timeslot[] = [];
  const seen = new Set<string>();

  const durMs = new Map([...durations].map(([r, d]) => [r, minutesMs(d)]));
  const offer = (startMs: number, reason: string, dur: number, offset?: number): void => {
    if (startMs <= o.nowMs || startMs > o.horizonMs) return;
    const key = `${startMs}|${reason}`;
    if (seen.has(key)) return;
    if (holds && overlapsHold(holds, startMs, startMs + durMs.get(reason)!)) return;
    seen.add(key);
    out.push({ startMs, startTime: clock.format(zone, startMs, offset), visitReasonId: reason, durationMinutes: dur });
  };

  for (const date of clock.dates(o.from, o.to)) {
    if (clock.startOfDay(zone, date) > o.horizonMs) break;
    if (o.stopAfter !== undefined && out.length >= o.stopAfter) break;
    const { weekday } = clock.day(date);
    for (const b of blocks) {
      if (b.weekday !== weekday) continue;
      const startPoint = clock.point(zone, date, b.startMin);
      const endPoint = clock.point(zone, date, b.endMin);
      const blockStart = startPoint.ms;
      const blockEnd = endPoint.ms;
      const startOffset = startPoint.offset;
      // Same offset at both ends: no daylight-saving change inside the block.
      const constant = startOffset === endPoint.offset;
      for (const [reason, dur] of durations) {
        if (b.visitReasonIds && !b.visitReasonIds.includes(reason)) continue;
        const step = durMs.get(reason)!;
        for (let s = blockStart; s + step <= blockEnd; s += step) offer(s, reason, dur, constant ? startOffset : undefined);
      }
    }
    for (const p of pushed) {
      if (p.localDate !== date) continue;
      for (const [reason, dur] of durations) {
        if (p.excluded?.includes(reason)) continue;
        if (p.allowed && p.allowed.length > 0 && !p.allowed.includes(reason)) continue;
        offer(p.startMs, reason, dur);
      }
    }
  }
  out.sort((a, b) => a.startMs - b.startMs || (a.visitReasonId < b.visitReasonId ? -1 : a.visitReasonId > b.visitReasonId ? 1 : 0));
  return o.stopAfter !== undefined ? out.slice(0, o.stopAfter) : out;
}

/**
 * True when `startMs` is a start time the schedule offers for this provider-location, visit reason
 * and patient type at `now` (interface.md §2.1 `data.start_time`), ignoring held time: whether the
 * time is still free is decided by the database's no-overlap constraint when the hold is inserted.
 */
export async function isScheduledStart(
  db: Kysely<Database>,
  input: { env: Env; pl: ProviderLocationContext; visitReasonId: string; patientType: PatientType; startMs: number; now?: Date },
): Promise<boolean> {
  const clock = new LocalClock();
  const date = clock.localDate(input.pl.timeZone, input.startMs);
  const res = await availabilityOf(db, new Map([[input.pl.id, input.pl]]), {
    env: input.env,
    visitReasonId: input.visitReasonId,
    patientType: input.patientType,
    from: date,
    to: date,
    ignoreHolds: true,
    clock,
    ...(input.now ? { now: input.now } : {}),
  });
  return !!res.get(input.pl.id)?.slots.some((s) => s.startMs === input.startMs);
}

/**
 * The first bookable slot per provider-location within `days` days of `now` (any visit reason when
 * `visitReasonId` is omitted), for `first_availability` and the directory summaries (interface.md
 * §2.4, §2.5: up to 90 days ahead). Walks a week at a time and stops at the first hit.
 */
export async function firstAvailability(
  db: Kysely<Database>,
  input: { env: Env; providerLocationIds: string[]; visitReasonId?: string; patientType: PatientType; from?: string; now?: Date; days?: number; clock?: LocalClock },
): Promise<Map<string, Timeslot>> {
  const now = input.now ?? new Date();
  const clock = input.clock ?? new LocalClock();
  const days = input.days ?? 90;
  const found = new Map<string, Timeslot>();
  let pending = [...new Set(input.providerLocationIds)];
  const pls = await loadProviderLocations(db, input.env, pending);
  // Local start per provider-location; walk in weekly chunks.
  const starts = new Map(pending.filter((id) => pls.get(id)?.active).map((id) => {
    const zone = pls.get(id)!.timeZone;
    const today = clock.today(zone, now);
    return [id, { from: input.from && input.from > today ? input.from : today, last: clock.addDays(today, days) }];
  }));
  pending = [...starts.keys()];
  for (let chunk = 0; pending.length > 0 && chunk * 7 <= days + 7; chunk++) {
    const groups = new Map<string, string[]>();
    for (const id of pending) {
      const s = starts.get(id)!;
      const from = clock.addDays(s.from, chunk * 7);
      if (from > s.last) continue;
      const key = from;
      groups.set(key, [...(groups.get(key) ?? []), id]);
    }
    if (groups.size === 0) break;
    for (const [from, ids] of groups) {
      const to = clock.addDays(from, 6);
      const res = await computeAvailability(db, {
        env: input.env,
        providerLocationIds: ids,
        patientType: input.patientType,
        from,
        to,
        now,
        stopAfter: 1,
        clock,
        ...(input.visitReasonId ? { visitReasonId: input.visitReasonId } : {}),
      });
      for (const [id, a] of res) {
        const first = a.slots[0];
        const last = starts.get(id)!.last;
        if (first && clock.localDate(a.timeZone, first.startMs) <= last) found.set(id, first);
      }
    }
    pending = pending.filter((id) => !found.has(id));
  }
  return found;
}
