/**
 * Availability summaries of provider-locations for directory listings (docs/api/directory.md,
 * "Schedulable entities" and "The ProviderLocation resource"; docs/api/conventions.md, "Limits"):
 * their shape, and their computation from the schedule.
 *
 * The slots are those of the availability endpoint: `walkSlots` (`slots.ts`; weekly schedules and
 * pushed calendar timeslots minus held time), over data loaded set-based for any number of
 * provider-locations. Each provider-location's days are walked only until both answers are known
 * (the first slot, and either `LIMITED_BELOW` default-reason slots or the end of the
 * `LIMITED_WINDOW_DAYS` window), so a page of 10,000 entities costs a few days of slots each, not 90.
 *
 * Where a listing takes a summary from (the memo, the stored rows, or this computation) is
 * `directory-availability.ts`.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { TimeSlice } from '../../lib/time-slice.js';
import type { PatientType } from '../patient-type.js';
import type { LocalClock } from '../scheduling/local-time.js';
import { loadScheduleData, type SlotSource, type WeeklyBlock } from '../scheduling/schedule-data.js';
import { MAX_DURATION_MINUTES, reasonsOf, walkSlots } from './slots.js';

export type Next28Days = 'none' | 'limited' | 'available';

export interface PatientTypeAvailability {
  /** First bookable start (any visit reason) within `SUMMARY_HORIZON_DAYS`, ISO-8601 UTC; absent when none. */
  next_available_utc?: string;
  /** `limited`: fewer than `LIMITED_BELOW` timeslots (default visit reason) in the next `LIMITED_WINDOW_DAYS`. */
  next_28_days: Next28Days;
}

export interface AvailabilitySummary {
  new: PatientTypeAvailability;
  existing: PatientTypeAvailability;
  /** Local date (provider's zone) of the first new-patient slot within `SUMMARY_HORIZON_DAYS`. */
  first_availability_date_in_provider_local_time?: string;
  /** The visit reason the `url` of the summary is for (the provider's default). */
  default_visit_reason_id?: string;
}

/**
 * How far ahead stored and listed summaries look (days after now): `next_available_utc` and the
 * first availability date are the first slot starting before now + 90 days. The published limit
 * (docs/api/conventions.md, "Limits"); shorter than `BOOKING_HORIZON_DAYS` because a listing only
 * needs to tell "soon" from "not soon", and each summary's walk and data load cost grow with it.
 */
export const SUMMARY_HORIZON_DAYS = 90;
/** The window `next_28_days` counts slots in (days after now). */
export const LIMITED_WINDOW_DAYS = 28;
/** Fewer default-reason slots than this in the window: `limited`. */
export const LIMITED_BELOW = 20;
const DAY_MS = 86_400_000;

/** What the computation needs of a provider-location: its slot source and default visit reason. */
export interface SummarySource extends SlotSource {
  defaultReason: string | undefined;
}

/**
 * Computes the summaries of `sources` at `now`, handing each to `emit` as soon as it is known (so a
 * memo can take it before the next is computed). One data load for all of them; `blocks` may carry
 * their weekly schedules already read (then they are not queried). Yields the event loop every few
 * milliseconds: hundreds of summaries take tens of milliseconds.
 */
export async function computeSummaries(
  db: Db,
  input: { env: Env; sources: Map<string, SummarySource>; blocks: Map<string, WeeklyBlock[]> | undefined; now: Date; clock: LocalClock },
  emit: (id: string, summary: AvailabilitySummary) => void,
): Promise<void> {
  const { sources, now, clock } = input;
  const nowMs = now.getTime();
  const horizonMs = nowMs + SUMMARY_HORIZON_DAYS * DAY_MS;
  const limitedEnd = nowMs + LIMITED_WINDOW_DAYS * DAY_MS;
  const data = await loadScheduleData(
    db,
    input.env,
    sources,
    { fromMs: nowMs, toMs: horizonMs + MAX_DURATION_MINUTES * 60_000 },
    { withHolds: true, visitReasonIds: reasonsOf(sources), ...(input.blocks ? { blocks: input.blocks } : {}) },
  );

  // Last local date of the walk per first date (few distinct values: one Luxon call each).
  const lastOf = new Map<string, string>();
  // Hundreds of summaries take tens of milliseconds: other requests get the event loop every few ms.
  const slice = new TimeSlice();
  for (const pl of sources.values()) {
    await slice.pause();
    const today = clock.today(pl.timeZone, now);
    let last = lastOf.get(today);
    if (last === undefined) lastOf.set(today, (last = clock.addDays(today, SUMMARY_HORIZON_DAYS + 1)));
    const summarise = (pt: PatientType): { availability: PatientTypeAvailability; firstDate?: string } => {
      let earliest: number | undefined;
      let firstDate: string | undefined;
      let count = 0;
      const days = walkSlots(pl, data, clock, {
        from: today,
        to: last,
        patientType: pt,
        nowMs,
        // Other visit reasons matter only for the first slot.
        firstOfBlockExcept: pl.defaultReason ?? '',
        // next_available_utc is "up to 90 days ahead": starts before now + 90 days.
        lastStartMs: horizonMs - 1,
        // Both answers known: the first slot, and either 20 default-reason slots or the 28-day window's end.
        stopBefore: (day) => earliest !== undefined && (count >= LIMITED_BELOW || day.startMs >= limitedEnd),
      });
      for (const day of days) {
        const first = day.slots[0];
        if (earliest === undefined && first) {
          earliest = first.startMs;
          firstDate = day.date;
        }
        for (const s of day.slots) if (s.visitReasonId === pl.defaultReason && s.startMs < limitedEnd) count++;
      }
      const next_28_days: Next28Days = count === 0 ? 'none' : count < LIMITED_BELOW ? 'limited' : 'available';
      return {
        availability: earliest !== undefined ? { next_available_utc: new Date(earliest).toISOString(), next_28_days } : { next_28_days },
        ...(firstDate ? { firstDate } : {}),
      };
    };
    const n = summarise('new');
    const summary: AvailabilitySummary = {
      new: n.availability,
      existing: summarise('existing').availability,
      ...(pl.defaultReason ? { default_visit_reason_id: pl.defaultReason } : {}),
    };
    if (n.firstDate) summary.first_availability_date_in_provider_local_time = n.firstDate;
    emit(pl.id, summary);
  }
}
