/**
 * A bounded, short-lived, in-process memo of provider-location availability summaries
 * (`directoryAvailability`), shared by the directory listings of one application.
 *
 * Directory listings (`GET /v1/schedulable_entities`, provider-location search, providers by NPI)
 * show a summary of the next 90 days of slots; clients are told to cache the entity list for a
 * week, so a summary up to `ttlMs` old (at most 60 s) is acceptable there. A listing passes this
 * memo to `directoryAvailability`, which takes a summary from it, else from the stored rows that the
 * background refresher keeps (`summary-store.ts`; a row is served while it is younger
 * than this memo's `ttlMs`), else computes it. The single provider-location read, the availability
 * endpoint and booking never read this memo nor the stored rows: they always compute from the
 * database.
 *
 * Entries expire `ttlMs` after the instant their summary was computed for (a stored row's
 * `computed_at`, not the time it was read), so memo and rows together never show a summary older
 * than `ttlMs`; past `maxEntries` the oldest entries are dropped (a `Map` keeps insertion order).
 * Each application makes its own; nothing is module-level.
 */
import { LocalClock } from '../scheduling/local-time.js';
import type { AvailabilitySummary } from './summaries.js';

/** The longest staleness this memo may be configured with (ms). */
export const MAX_SUMMARY_TTL_MS = 60_000;
/** Listing pages remembered by `notePage` (the oldest are dropped past it). */
const MAX_PAGES = 10_000;

interface Entry {
  summary: AvailabilitySummary;
  expiresAt: number;
}

export class AvailabilityCache {
  private readonly entries = new Map<string, Entry>();
  /** Listing pages whose summaries are all memoised, until when (`notePage`). */
  private readonly pages = new Map<string, number>();
  /** How old a summary this memo's users accept (ms, at most `MAX_SUMMARY_TTL_MS`): the memo's TTL, and the age limit of stored rows. */
  readonly ttlMs: number;
  private readonly maxEntries: number;
  /** Local-time conversions shared by the computations that fill this memo (and by the single provider-location read). */
  readonly clock = new LocalClock();
  /** Counters for benchmarks and tests. */
  hits = 0;
  misses = 0;

  /** `ttlMs` is capped at `MAX_SUMMARY_TTL_MS`. */
  constructor(opts: { ttlMs?: number; maxEntries?: number } = {}) {
    this.ttlMs = Math.min(opts.ttlMs ?? MAX_SUMMARY_TTL_MS, MAX_SUMMARY_TTL_MS);
    this.maxEntries = opts.maxEntries ?? 200_000;
  }

  /** The summary of `env`/`id` computed less than `ttlMs` before `nowMs`, if any. */
  get(env: string, id: string, nowMs: number): AvailabilitySummary | undefined {
    const key = `${env}|${id}`;
    const e = this.entries.get(key);
    if (e && e.expiresAt > nowMs) {
      this.hits++;
      return e.summary;
    }
    if (e) this.entries.delete(key);
    this.misses++;
    return undefined;
  }

  /** Remembers a summary computed for the instant `nowMs` (it expires `ttlMs` after that instant). */
  set(env: string, id: string, summary: AvailabilitySummary, nowMs: number): void {
    const key = `${env}|${id}`;
    this.entries.delete(key);
    this.entries.set(key, { summary, expiresAt: nowMs + this.ttlMs });
    if (this.entries.size > this.maxEntries) {
      let excess = this.entries.size - this.maxEntries;
      for (const k of this.entries.keys()) {
        if (excess-- <= 0) break;
        this.entries.delete(k);
      }
    }
  }

  /**
   * Records that the listing page `key` has just put the summaries of `ids` (of `env`) in this memo:
   * `pageMemoised(key)` holds until the first of them expires. Nothing is recorded when one is
   * missing. A listing that finds its page memoised does not read its page's stored summaries
   * alongside the page (it would not use them).
   */
  notePage(key: string, env: string, ids: Iterable<string>): void {
    let until = Infinity;
    for (const id of ids) {
      const e = this.entries.get(`${env}|${id}`);
      if (!e) return;
      until = Math.min(until, e.expiresAt);
    }
    if (until === Infinity) return;
    this.pages.delete(key);
    this.pages.set(key, until);
    if (this.pages.size > MAX_PAGES) this.pages.delete(this.pages.keys().next().value!);
  }

  /** True while the summaries `notePage` recorded for the listing page `key` are all memoised (unless evicted meanwhile). */
  pageMemoised(key: string, nowMs: number): boolean {
    const until = this.pages.get(key);
    if (until !== undefined && until <= nowMs) this.pages.delete(key);
    return until !== undefined && until > nowMs;
  }

  /** Forgets everything (e.g. after a bulk import in a benchmark, to measure a cold request). */
  clear(): void {
    this.entries.clear();
    this.pages.clear();
  }

  /** Number of entries held (expired ones included until looked up or evicted). */
  get size(): number {
    return this.entries.size;
  }
}
