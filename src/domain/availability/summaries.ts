/**
 * Availability summaries of provider-locations for directory listings (interface.md §2.4
 * `new_patient_availability` / `existing_patient_availability`, §2.5
 * `first_availability_date_in_provider_local_time`, §8 "Availability horizon" and "Limited
 * availability").
 *
 * The slots are those of the availability endpoint: `walkSlots` of `src/domain/scheduling/availability.ts`
 * (weekly schedules and pushed calendar timeslots minus held time, contracts.md §5), over data
 * loaded set-based for any number of provider-locations. Each provider-location's days are walked
 * only until both answers are known (the first slot, and either 20 default-reason slots or the end
 * of the 28-day window), so a page of 10,000 entities costs a few days of slots each, not 90.
 *
 * Listings (a caller with a `cache`) accept a summary up to the cache's TTL old (at most 60 s) and
 * take it, in this order, from the in-process memo (`availability-cache.ts`), from the stored rows
 * of `availability_summaries` (`availability-summary-store.ts`), and only then compute it here.
 * The background workers keep those rows younger than the limit (`availability-summary-refresh.ts`:
 * every 5 s, rows older than 40 s are recomputed by this function, in batches, under an advisory
 * lock per environment), at ~1.2 s of CPU per 10,000 summaries (Node and PostgreSQL together; see
 * docs/directory-format.md, "Performance notes"). Without a cache (the refresher itself, tests)
 * every summary is computed.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import type { AvailabilityCache } from './summary-cache.js';
import { readStoredSummaries, type StoredSummary } from './summary-store.js';
import { MAX_DURATION_MINUTES, reasonsOf, walkSlots } from './slots.js';
import { LocalClock } from '../scheduling/local-time.js';
import { TimeSlice } from '../../lib/time-slice.js';
import { loadProviderLocations, loadScheduleData, parseWeeklyBlocks, type SlotSource, type WeeklyBlock } from '../scheduling/schedule-data.js';

export type PatientType = 'new' | 'existing';
export type Next28Days = 'none' | 'limited' | 'available';

export interface PatientTypeAvailability {
  /** First bookable start (any visit reason) within 90 days, ISO-8601 UTC; absent when none. */
  next_available_utc?: string;
  /** `limited`: fewer than 20 timeslots (default visit reason) in the next 28 days. */
  next_28_days: Next28Days;
}

export interface AvailabilitySummary {
  new: PatientTypeAvailability;
  existing: PatientTypeAvailability;
  /** Local date (provider's zone) of the first new-patient slot within 90 days. */
  first_availability_date_in_provider_local_time?: string;
  /** The visit reason the `url` of the summary is for (the provider's default). */
  default_visit_reason_id?: string;
}

export const HORIZON_DAYS = 90;
export const LIMITED_WINDOW_DAYS = 28;
export const LIMITED_BELOW = 20;
const DAY_MS = 86_400_000;

/** What the computation needs of a provider-location; callers that already query these columns pass them. */
export interface AvailabilityInputRow {
  id: string;
  provider_id: string;
  location_id: string;
  time_zone: string;
  visit_reason_ids: string[];
  default_visit_reason_id: string | null;
  /** `weeklyBlocksAggSql` of the provider-location's weekly schedules; omitted: loaded here. */
  blocks?: string | null;
}

interface Source extends SlotSource {
  defaultReason: string | undefined;
}

/**
 * Availability summaries for `providerLocationIds` (any order, any count), keyed by id. Ids that are
 * unknown or inactive are absent from the map. `rows` may be given instead of ids by a caller that
 * has already read them (active provider-locations only). `now` is injectable for tests.
 *
 * With `cache` (directory listings, which may show a summary up to its TTL old; see
 * `availability-cache.ts`), a summary is taken from the memo, else from a stored row computed less
 * than the TTL before `now` (one query for all the ids the memo lacks, or `stored`, read by the
 * caller alongside its own query), else computed; stored and
 * computed summaries are memoised (a stored one until its own TTL runs out). Rows are never written
 * here: the background refresher writes them. Without `cache` every summary is computed.
 */
export async function directoryAvailability(
  db: Db,
  input: {
    env: Env;
    providerLocationIds?: string[];
    rows?: AvailabilityInputRow[];
    now?: Date;
    clock?: LocalClock;
    cache?: AvailabilityCache;
    /** With `cache`: the stored summaries already read for these ids (`readStoredSummaries`); then none are read here. */
    stored?: Map<string, StoredSummary>;
  },
): Promise<Map<string, AvailabilitySummary>> {
  const out = new Map<string, AvailabilitySummary>();
  const now = input.now ?? new Date();
  const nowMs = now.getTime();
  const cache = input.cache;
  const clock = input.clock ?? cache?.clock ?? new LocalClock();

  // 1. The memo; 2. stored rows young enough (listings only).
  const pendingRows = input.rows?.filter((r) => !fromMemo(cache, input.env, r.id, nowMs, out));
  const pendingIds = input.rows ? [] : [...new Set(input.providerLocationIds ?? [])].filter((id) => !fromMemo(cache, input.env, id, nowMs, out));
  if (cache) {
    const wanted = pendingRows ? pendingRows.map((r) => r.id) : pendingIds;
    const stored = input.stored ?? (await readStoredSummaries(db, input.env, wanted, { nowMs, maxAgeMs: cache.ttlMs, activeOnly: !pendingRows }));
    for (const id of wanted) {
      const s = stored.get(id);
      // A prefetched row is checked against the limit again (it was read for the same instant).
      if (!s || s.computedAtMs > nowMs || s.computedAtMs <= nowMs - cache.ttlMs) continue;
      out.set(id, s.summary);
      cache.set(input.env, id, s.summary, s.computedAtMs);
    }
  }

  // 3. The rest is computed.
  const sources = new Map<string, Source>();
  let blocks: Map<string, WeeklyBlock[]> | undefined;
  if (pendingRows) {
    const rows = pendingRows.filter((r) => !out.has(r.id));
    // Blocks come with the rows unless a row lacks them (then they are all loaded below).
    if (rows.every((r) => r.blocks !== undefined)) blocks = new Map();
    for (const r of rows) {
      const reasons = r.visit_reason_ids.length ? r.visit_reason_ids : r.default_visit_reason_id ? [r.default_visit_reason_id] : [];
      sources.set(r.id, {
        id: r.id,
        providerId: r.provider_id,
        timeZone: r.time_zone,
        visitReasonIds: reasons,
        defaultReason: r.default_visit_reason_id ?? reasons[0],
      });
      blocks?.set(r.id, parseWeeklyBlocks(r.blocks ?? null));
    }
  } else {
    const ids = pendingIds.filter((id) => !out.has(id));
    for (const pl of (await loadProviderLocations(db, input.env, ids)).values()) {
      if (pl.active) sources.set(pl.id, { ...pl, defaultReason: pl.defaultVisitReasonId ?? pl.visitReasonIds[0] });
    }
  }
  if (sources.size === 0) return out;

  const horizonMs = nowMs + HORIZON_DAYS * DAY_MS;
  const limitedEnd = nowMs + LIMITED_WINDOW_DAYS * DAY_MS;
  const data = await loadScheduleData(
    db,
    input.env,
    sources,
    { fromMs: nowMs, toMs: horizonMs + MAX_DURATION_MINUTES * 60_000 },
    { withHolds: true, visitReasonIds: reasonsOf(sources), ...(blocks ? { blocks } : {}) },
  );

  // Last local date of the walk per first date (few distinct values: one Luxon call each).
  const lastOf = new Map<string, string>();
  // Hundreds of summaries take tens of milliseconds: other requests get the event loop every few ms.
  const slice = new TimeSlice();
  for (const pl of sources.values()) {
    await slice.pause();
    const today = clock.today(pl.timeZone, now);
    let last = lastOf.get(today);
    if (last === undefined) lastOf.set(today, (last = clock.addDays(today, HORIZON_DAYS + 1)));
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
    out.set(pl.id, summary);
    cache?.set(input.env, pl.id, summary, nowMs);
  }
  return out;
}

/** Puts the memoised summary of `id` into `out`; false when the memo has none (or no memo). */
function fromMemo(cache: AvailabilityCache | undefined, env: Env, id: string, nowMs: number, out: Map<string, AvailabilitySummary>): boolean {
  const hit = cache?.get(env, id, nowMs);
  if (hit) out.set(id, hit);
  return hit !== undefined;
}
