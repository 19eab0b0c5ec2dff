/**
 * Booking contexts kept in memory (issue #8 §7: booking throughput). A booking first checks its
 * request against a kept context and writes with the context's versions (migration 0010); the write
 * inserts nothing when the directory or the provider's calendar changed since the context was read,
 * and the booking then reads the context again. A kept context that refuses a request is read again
 * before the refusal is answered, so a kept context never refuses what a fresh one accepts, and its
 * write never succeeds against a changed schedule.
 *
 * One cache per application (the appointments routes make it): contexts are per environment,
 * developer, provider-location, visit reason, insurance plan and UTC day of the start. A context
 * measured about 2.8 kB of heap (fourteen weekly blocks, no pushed slots), so the default bound of
 * 5,000 keeps at most ~15 MB per process.
 */
import { LRUCache } from 'lru-cache';
import type { Principal } from '../credentials/principal.js';
import type { BookingContext } from './booking-context.js';

/** A bounded map of booking contexts; the least recently used goes first when it is full. */
export class BookingContextCache {
  private readonly entries: LRUCache<string, BookingContext>;

  /** @param maxEntries contexts kept (about 3 kB each). */
  constructor(maxEntries = 5_000) {
    this.entries = new LRUCache({ max: Math.max(1, Math.floor(maxEntries)) });
  }

  /** The key of a booking's context. */
  static key(principal: Principal, input: { providerLocationId: string; visitReasonId: string; insurancePlanId?: string | undefined; day: number }): string {
    return `${principal.env}\u0000${principal.developerId}\u0000${input.providerLocationId}\u0000${input.visitReasonId}\u0000${input.insurancePlanId ?? ''}\u0000${input.day}`;
  }

  /** The kept context of `key`, if any. */
  get(key: string): BookingContext | undefined {
    return this.entries.get(key);
  }

  /** Keeps `ctx` under `key`, dropping the least recently used context when full. */
  set(key: string, ctx: BookingContext): void {
    this.entries.set(key, ctx);
  }

  /** Drops the context of `key` (its versions moved, or it refused a request). */
  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Contexts kept now. */
  get size(): number {
    return this.entries.size;
  }
}
