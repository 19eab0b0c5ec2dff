/**
 * Schedule data kept in memory for the availability endpoint (issue #20 §6; docs/scheduling.md,
 * "Kept schedule data"). What a provider-location's slots are computed from changes rarely (a
 * directory import, a practice's schedule change, a calendar push), so a process keeps it, labelled
 * with the versions of migration 0010 it was read with (the directory's, and the provider's
 * calendar's), and uses it only while a request's one statement reads those same versions
 * (`loadKeptSchedules`, kept-load.ts). Held time is never kept: bookings change it all the time.
 *
 * Entries are per environment (sandbox and production never share one), developer (a
 * provider-location is kept only as found in that developer's directory), provider-location and UTC
 * span of the data; visit reasons per environment; insurance answers per environment, plan or
 * carrier and provider-location. The maps are LRU-bounded: a provider-location entry of the default
 * window measured ~2.1 kB of heap (the bench directory's: about nine weekly blocks, no calendar
 * timeslots; 1,000 entries), so the default 5,000 keeps ~10 MB, more with many timeslots.
 * One instance per application (src/http/app.ts makes it); nothing here is module-level state.
 */
import { LRUCache } from 'lru-cache';
import type { Env } from '../../db/schema.js';
import type { ProviderLocationContext, PushedSlot, TimeOffSpan, WeeklyBlock } from '../scheduling/schedule-data.js';
import type { Durations, ReasonOverride } from '../scheduling/visit-reason-durations.js';

/** The UTC span `[fromMs, toMs)` a provider-location's calendar data was read for. */
export interface KeptSpan {
  fromMs: number;
  toMs: number;
}

/** A provider-location's schedule as read in one statement, with the versions it was read with. */
export interface KeptProviderLocation {
  /** `directory_version` when read (decimal text). */
  directory: string;
  /** The provider's `calendar_versions` row when read ("0" without one). */
  calendar: string;
  pl: ProviderLocationContext;
  blocks: WeeklyBlock[];
  /** The practice's visit reason overrides at this provider-location, by visit reason. */
  overrides: Map<string, ReasonOverride> | undefined;
  /** Calendar timeslots of the span. */
  pushed: PushedSlot[];
  /** The provider's time off touching the span (every location's). */
  timeOff: TimeOffSpan[];
}

/** A visit reason as read: its directory durations, or null when it does not exist. */
export interface KeptReason {
  directory: string;
  durations: Durations | null;
}

/**
 * Whether a provider-location takes an insurance plan (or a carrier's), labelled with the directory
 * version read before it (all the tables the answer reads move that version).
 */
export interface KeptInsurance {
  directory: string;
  accepted: boolean;
}

/** Default bound of kept provider-location entries (and, separately, of visit reasons). */
export const KEPT_SCHEDULES_MAX = 5_000;

/** The kept schedule data of one application (see the module comment). */
export class KeptSchedules {
  private readonly pls: LRUCache<string, KeptProviderLocation>;
  private readonly reasons: LRUCache<string, KeptReason>;
  private readonly insurance: LRUCache<string, KeptInsurance>;

  /** @param maxEntries provider-location entries kept (about 2 kB each); as many visit reasons, and insurance answers. */
  constructor(maxEntries = KEPT_SCHEDULES_MAX) {
    const max = Math.max(1, Math.floor(maxEntries));
    this.pls = new LRUCache({ max });
    this.reasons = new LRUCache({ max });
    this.insurance = new LRUCache({ max });
  }

  private static plKey(env: Env, developerId: string | undefined, id: string, span: KeptSpan): string {
    return `${env}\u0000${developerId ?? ''}\u0000${id}\u0000${span.fromMs}\u0000${span.toMs}`;
  }

  private static reasonKey(env: Env, id: string): string {
    return `${env}\u0000${id}`;
  }

  /** The kept entry of provider-location `id` for `developerId` and `span`, current or not. */
  getProviderLocation(env: Env, developerId: string | undefined, id: string, span: KeptSpan): KeptProviderLocation | undefined {
    return this.pls.get(KeptSchedules.plKey(env, developerId, id, span));
  }

  /** Keeps `entry` (read in `developerId`'s directory over `span`). */
  setProviderLocation(env: Env, developerId: string | undefined, span: KeptSpan, entry: KeptProviderLocation): void {
    this.pls.set(KeptSchedules.plKey(env, developerId, entry.pl.id, span), entry);
  }

  /** Drops the entry of provider-location `id` (its versions moved). */
  deleteProviderLocation(env: Env, developerId: string | undefined, id: string, span: KeptSpan): void {
    this.pls.delete(KeptSchedules.plKey(env, developerId, id, span));
  }

  /** The kept visit reason `id`, current or not. */
  getReason(env: Env, id: string): KeptReason | undefined {
    return this.reasons.get(KeptSchedules.reasonKey(env, id));
  }

  /** Keeps visit reason `id` as read. */
  setReason(env: Env, id: string, entry: KeptReason): void {
    this.reasons.set(KeptSchedules.reasonKey(env, id), entry);
  }

  /** Whether provider-location `id` takes the plan / carrier of `filter` (`insuranceFilterKey`), current or not. */
  getInsurance(env: Env, filter: string, id: string): KeptInsurance | undefined {
    return this.insurance.get(`${env}\u0000${filter}\u0000${id}`);
  }

  /** Keeps whether provider-location `id` takes the plan / carrier of `filter`. */
  setInsurance(env: Env, filter: string, id: string, entry: KeptInsurance): void {
    this.insurance.set(`${env}\u0000${filter}\u0000${id}`, entry);
  }

  /** Provider-location entries kept now. */
  get size(): number {
    return this.pls.size;
  }
}
