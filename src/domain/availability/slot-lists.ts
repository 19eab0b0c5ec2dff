/**
 * The slots of the availability endpoint (docs/api/availability.md, "Availability request"): every
 * bookable slot of each provider-location over a window of local dates, and the first slot after
 * it. One set-based data load per call (`loadScheduleData`), then `walkSlots` per provider-location.
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
 *   ignoreHolds?: boolean,                  // true: the schedule alone
 *   stopAfter?: number,                     // stop a provider-location after this many slots
 *   clock?: LocalClock,                     // share conversions across calls (e.g. one per app)
 * }): Promise<Map<string, ProviderLocationAvailability>>
 * ```
 */
import type { Kysely } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import type { PatientType } from '../patient-type.js';
import { LocalClock, minutesMs } from '../scheduling/local-time.js';
import { loadProviderLocations, loadScheduleData, type ScheduleData, type SlotSource } from '../scheduling/schedule-data.js';
import { bookingHorizonEndMs, formatSlot, MAX_DURATION_MINUTES, reasonsOf, walkSlots, type Timeslot } from './slots.js';

/**
 * How far after today (local days, inclusive) `first_availability` looks (`firstAvailabilityWindows`). 90, like the
 * directory's summaries (`SUMMARY_HORIZON_DAYS`), so the endpoint's `first_availability` and a
 * listing's `next_available_utc` look equally far (docs/api/conventions.md, "Limits").
 */
export const FIRST_AVAILABILITY_DAYS = 90;

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

/** Bookable slots per provider-location; see the module comment for the signature. */
export async function computeAvailability(db: Kysely<Database>, q: AvailabilityQuery): Promise<Map<string, ProviderLocationAvailability>> {
  const all = await loadProviderLocations(db, q.env, [...new Set(q.providerLocationIds)]);
  return availabilityOf(db, new Map([...all].filter(([, p]) => p.active)), q);
}

/** `computeAvailability` for provider-locations already loaded with `loadProviderLocations` (active ones). */
async function availabilityOf(
  db: Kysely<Database>,
  pls: Map<string, SlotSource>,
  q: Omit<AvailabilityQuery, 'providerLocationIds'>,
): Promise<Map<string, ProviderLocationAvailability>> {
  const now = q.now ?? new Date();
  const clock = q.clock ?? new LocalClock();
  if (pls.size === 0) return new Map();
  const { windows, span } = availabilityWindows(pls, { ...q, now, clock });
  const data = await loadScheduleData(db, q.env, pls, span, { withHolds: !q.ignoreHolds, visitReasonIds: reasonsOf(pls, q.visitReasonId) });
  return walkAvailability(pls, data, windows, { ...q, now, clock });
}

/** Each provider-location's local window (the query's dates, else today there and 7 days on), and the UTC span covering them all. */
export function availabilityWindows(
  pls: Map<string, SlotSource>,
  q: { from?: string | undefined; to?: string | undefined; now: Date; clock: LocalClock },
): { windows: Map<string, { from: string; to: string }>; span: { fromMs: number; toMs: number } } {
  const { clock, now } = q;
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
  return { windows, span: { fromMs: minMs, toMs: maxMs + minutesMs(MAX_DURATION_MINUTES) } };
}

/** The slots of `pls` in their `windows`, walked over `data` (loaded over a span covering the windows). */
export function walkAvailability(
  pls: Map<string, SlotSource>,
  data: ScheduleData,
  windows: Map<string, { from: string; to: string }>,
  q: Omit<AvailabilityQuery, 'providerLocationIds' | 'env' | 'now' | 'clock'> & { now: Date; clock: LocalClock },
): Map<string, ProviderLocationAvailability> {
  const { clock } = q;
  const out = new Map<string, ProviderLocationAvailability>();
  const nowMs = q.now.getTime();
  const lastStartMs = bookingHorizonEndMs(nowMs);
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

/**
 * `first_availability`'s window of each provider-location (from `from`, not before today there, to
 * `days` after today; none when that is empty) and the UTC span covering them all.
 */
export function firstAvailabilityWindows(
  pls: Map<string, SlotSource>,
  input: { from?: string | undefined; now: Date; clock: LocalClock; days: number },
): { windows: Map<string, { from: string; to: string }>; span: { fromMs: number; toMs: number } } {
  const { clock, now } = input;
  const windows = new Map<string, { from: string; to: string }>();
  let minMs = Infinity;
  let maxMs = -Infinity;
  for (const pl of pls.values()) {
    const today = clock.today(pl.timeZone, now);
    const w = { from: input.from && input.from > today ? input.from : today, to: clock.addDays(today, input.days) };
    if (w.from > w.to) continue;
    windows.set(pl.id, w);
    minMs = Math.min(minMs, clock.startOfDay(pl.timeZone, w.from));
    maxMs = Math.max(maxMs, clock.startOfDay(pl.timeZone, clock.day(w.to).next));
  }
  return { windows, span: { fromMs: minMs, toMs: maxMs + minutesMs(MAX_DURATION_MINUTES) } };
}

/** The first slot of each provider-location of `windows`, walked over `data` (loaded over a span covering them). */
export function walkFirstAvailability(
  pls: Map<string, SlotSource>,
  data: ScheduleData,
  windows: Map<string, { from: string; to: string }>,
  input: { visitReasonId?: string | undefined; patientType: PatientType; now: Date; clock: LocalClock },
): Map<string, Timeslot> {
  const { clock } = input;
  const found = new Map<string, Timeslot>();
  const nowMs = input.now.getTime();
  const lastStartMs = bookingHorizonEndMs(nowMs);
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
