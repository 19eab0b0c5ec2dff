/**
 * A bounded, short-lived, in-process memo of provider-location availability summaries
 * (`directoryAvailability`), shared by the directory listings of one application.
 *
 * Directory listings (`GET /v1/schedulable_entities`, provider-location search and read) show a
 * summary of the next 90 days of slots; clients are told to cache the entity list for a week, so a
 * summary up to `ttlMs` old (at most 60 s) is acceptable there. The availability endpoint and
 * booking never read this memo: they always compute from the database.
 *
 * Entries expire `ttlMs` after they were computed; past `maxEntries` the oldest entries are dropped
 * (a `Map` keeps insertion order). Each application makes its own; nothing is module-level.
 */
import { LocalClock } from '../scheduling/local-time.js';
import type { AvailabilitySummary } from './availability-summary.js';

/** The longest staleness this memo may be configured with (ms). */
export const MAX_SUMMARY_TTL_MS = 60_000;

interface Entry {
  summary: AvailabilitySummary;
  expiresAt: number;
}

export class AvailabilityCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  /** Local-time conversions shared by the computations that fill this memo. */
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

  /** Remembers a summary computed at `nowMs`. */
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

  /** Forgets everything (e.g. after a bulk import in a benchmark, to measure a cold request). */
  clear(): void {
    this.entries.clear();
  }

  /** Number of entries held (expired ones included until looked up or evicted). */
  get size(): number {
    return this.entries.size;
  }
}
