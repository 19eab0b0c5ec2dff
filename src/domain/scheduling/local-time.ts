/**
 * Local wall-clock time in IANA zones, through Luxon only (docs/api/availability.md#where-bookable-times-come-from "All local-time arithmetic
 * uses the location's IANA zone and is correct across daylight-saving changes").
 *
 * Instants are epoch milliseconds; converting local → instant and instant → local with an offset is
 * always Luxon's job. Conversions are memoised per clock, because availability converts the same
 * (zone, date, minute) triples over and over.
 */
import { DateTime, Duration, FixedOffsetZone, IANAZone, type Zone } from 'luxon';

/** `YYYY-MM-DD` and a real calendar date. */
export function isLocalDate(s: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(s) && DateTime.fromISO(s, { zone: 'UTC' }).isValid;
}

/** True when `zone` is an IANA zone id Luxon (ICU) knows. */
export function isIanaZone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}

/** Minutes in `n` minutes, as milliseconds (a Luxon duration, not hand arithmetic). */
export function minutesMs(n: number): number {
  return Duration.fromObject({ minutes: n }).toMillis();
}

/** 24 hours in milliseconds: the length of a local day without a daylight-saving change, and of a UTC day. */
export const DAY_MS = Duration.fromObject({ hours: 24 }).toMillis();

/** `HH:MM[:SS]` → minutes after midnight (a wall-clock position, not an instant; plain parsing, it runs per schedule block). */
export function wallMinutes(hhmmss: string): number {
  return Number(hhmmss.slice(0, 2)) * 60 + Number(hhmmss.slice(3, 5));
}

/**
 * A memo of two keys (a → b → value) holding at most `max` values; past that it is emptied and
 * fills again. Nested maps, so a lookup builds no key string, and no closure: it runs per slot.
 */
class TwoLevelMemo<A, B, V> {
  private readonly byA = new Map<A, Map<B, V>>();
  private count = 0;

  constructor(private readonly max: number) {}

  get(a: A, b: B): V | undefined {
    return this.byA.get(a)?.get(b);
  }

  set(a: A, b: B, value: V): void {
    if (++this.count > this.max) {
      this.byA.clear();
      this.count = 1;
    }
    let byB = this.byA.get(a);
    if (!byB) this.byA.set(a, (byB = new Map()));
    byB.set(b, value);
  }
}

/**
 * A memoising local-time converter (no module-level state): make one per computation, or keep one per
 * application to share conversions across requests; each memo is bounded (cleared past `maxEntries`).
 */
export class LocalClock {
  constructor(private readonly maxEntries = 200_000) {
    this.formatted = new TwoLevelMemo(maxEntries);
    this.added = new TwoLevelMemo(maxEntries);
  }

  /** zone → date → minute → instant: nested maps, so a lookup builds no key string (it runs per block per day). */
  private readonly instants = new Map<string, Map<string, Map<number, { ms: number; offset: number }>>>();
  private instantCount = 0;
  /** zone (or fixed offset) → instant → text. */
  private readonly formatted: TwoLevelMemo<string | number, number, string>;
  /** date → days → date (see `addDays`). */
  private readonly added: TwoLevelMemo<string, number, string>;
  private readonly days = new Map<string, { weekday: number; next: string }>();
  private readonly fixed = new Map<number, Zone>();

  /** The instant of local `date` at `minute` after midnight in `zone` (gap times move forward, Luxon rule). */
  instant(zone: string, date: string, minute: number): number {
    return this.point(zone, date, minute).ms;
  }

  /** The instant and the zone's UTC offset (minutes) at local `date` `minute`; memoised. */
  point(zone: string, date: string, minute: number): { ms: number; offset: number } {
    let byDate = this.instants.get(zone);
    if (!byDate) this.instants.set(zone, (byDate = new Map()));
    let byMinute = byDate.get(date);
    if (!byMinute) byDate.set(date, (byMinute = new Map()));
    let v = byMinute.get(minute);
    if (v === undefined) {
      const [year, month, day] = date.split('-').map(Number) as [number, number, number];
      const d = DateTime.fromObject({ year, month, day, hour: Math.floor(minute / 60), minute: minute % 60 }, { zone });
      v = { ms: d.toMillis(), offset: d.offset };
      if (++this.instantCount > this.maxEntries) {
        this.instants.clear();
        this.instantCount = 1;
        this.instants.set(zone, (byDate = new Map([[date, (byMinute = new Map())]])));
      }
      byMinute.set(minute, v);
    }
    return v;
  }

  /** `minutesMs(n)`, memoised (slot steps are computed per provider-location). */
  durationMs(minutes: number): number {
    let v = this.durations.get(minutes);
    if (v === undefined) this.durations.set(minutes, (v = minutesMs(minutes)));
    return v;
  }
  private readonly durations = new Map<number, number>();

  /** Start of local `date` in `zone` (midnight, or the first instant of the day if midnight is skipped). */
  startOfDay(zone: string, date: string): number {
    return this.instant(zone, date, 0);
  }

  /** ISO weekday (1 = Monday) of a local date, and the following date. */
  day(date: string): { weekday: number; next: string } {
    let v = this.days.get(date);
    if (!v) {
      const d = DateTime.fromISO(date, { zone: 'UTC' });
      v = { weekday: d.weekday, next: d.plus({ days: 1 }).toISODate()! };
      if (this.days.size >= this.maxEntries) this.days.clear();
      this.days.set(date, v);
    }
    return v;
  }

  /** Local dates from `from` to `to`, inclusive. */
  dates(from: string, to: string): string[] {
    const out: string[] = [];
    for (let d = from; d <= to; d = this.day(d).next) out.push(d);
    return out;
  }

  /** UTC offset in minutes of `zone` at instant `ms`. */
  offsetAt(zone: string, ms: number): number {
    return DateTime.fromMillis(ms, { zone }).offset;
  }

  /**
   * ISO-8601 of `ms` with the zone's own offset, e.g. `2026-03-08T03:00:00-04:00`. Pass the offset when
   * it is already known (constant over a schedule block) to skip the zone lookup.
   */
  format(zone: string, ms: number, knownOffset?: number): string {
    const outer = knownOffset ?? zone;
    let out = this.formatted.get(outer, ms);
    if (out === undefined) {
      let z: Zone | string = zone;
      if (knownOffset !== undefined) {
        z = this.fixed.get(knownOffset) ?? FixedOffsetZone.instance(knownOffset);
        this.fixed.set(knownOffset, z);
      }
      out = DateTime.fromMillis(ms, { zone: z }).toISO({ suppressMilliseconds: true })!;
      this.formatted.set(outer, ms, out);
    }
    return out;
  }

  /** Today's local date in `zone` at instant `now`. */
  today(zone: string, now: Date): string {
    return this.localDate(zone, now.getTime());
  }

  /**
   * The local date of instant `ms` in `zone`. Memoised as local days: zone → UTC day → the local
   * days that overlap it (`[startMs, endMs)`, at most three). A local day is kept only when it is
   * 24 hours long with the same UTC offset at both ends (no daylight-saving change that day), so
   * every instant inside it has that date; other days are computed by Luxon each time.
   */
  localDate(zone: string, ms: number): string {
    let byDay = this.localDays.get(zone);
    if (!byDay) this.localDays.set(zone, (byDay = new Map()));
    const utcDay = Math.floor(ms / DAY_MS);
    const known = byDay.get(utcDay);
    if (known) for (const d of known) if (ms >= d.startMs && ms < d.endMs) return d.date;
    const date = DateTime.fromMillis(ms, { zone }).toISODate()!;
    const start = this.point(zone, date, 0);
    const end = this.point(zone, this.day(date).next, 0);
    if (end.ms - start.ms === DAY_MS && start.offset === end.offset && ms >= start.ms && ms < end.ms) {
      if (++this.localDayCount > this.maxEntries) {
        this.localDays.clear();
        this.localDayCount = 1;
        this.localDays.set(zone, (byDay = new Map()));
      }
      const entry = { startMs: start.ms, endMs: end.ms, date };
      for (let k = Math.floor(start.ms / DAY_MS); k <= Math.floor((end.ms - 1) / DAY_MS); k++) {
        let list = byDay.get(k);
        if (!list) byDay.set(k, (list = []));
        list.push(entry);
      }
    }
    return date;
  }
  /** zone → UTC day number → local days overlapping it (see `localDate`). */
  private readonly localDays = new Map<string, Map<number, { startMs: number; endMs: number; date: string }[]>>();
  private localDayCount = 0;

  /** `date` plus `days` calendar days; memoised (availability asks the same few every request). */
  addDays(date: string, days: number): string {
    let v = this.added.get(date, days);
    if (v === undefined) {
      v = DateTime.fromISO(date, { zone: 'UTC' }).plus({ days }).toISODate()!;
      this.added.set(date, days, v);
    }
    return v;
  }

  /** Calendar days from `a` to `b` (b − a). */
  daysBetween(a: string, b: string): number {
    return DateTime.fromISO(b, { zone: 'UTC' }).diff(DateTime.fromISO(a, { zone: 'UTC' }), 'days').days;
  }
}

/** Parses an ISO-8601 date-time that must carry an offset (`Z` or `±hh:mm`); undefined otherwise. */
export function parseOffsetDateTime(s: string): DateTime | undefined {
  if (!/(Z|[+-]\d{2}:?\d{2})$/i.test(s) || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(s)) return undefined;
  const d = DateTime.fromISO(s, { setZone: true });
  return d.isValid ? d : undefined;
}

/** Parses a UTC timestamp query value (offset optional, UTC assumed); undefined when invalid. */
export function parseUtcTimestamp(s: string): DateTime | undefined {
  if (!/^\d{4}-\d{2}-\d{2}/.test(s)) return undefined;
  const d = DateTime.fromISO(s, { zone: 'UTC', setZone: false });
  return d.isValid ? d : undefined;
}

/** An instant as ISO-8601 UTC (`…Z`). */
export function utcIso(d: Date): string {
  // The same text as Luxon's UTC `toISO()` (milliseconds and `Z`) for years 0000–9999, at a
  // fraction of the cost (two per appointment record).
  return d.toISOString();
}
