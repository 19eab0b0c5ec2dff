/**
 * LocalClock's memoised local dates (src/domain/scheduling/local-time.ts `localDate`, `today`): the
 * same answer as Luxon for every instant, in zones with unusual offsets and daylight-saving rules,
 * on the first call (computed) and the second (from the memo). And its memoised `addDays`.
 */
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { LocalClock } from '../../src/domain/scheduling/local-time.js';

const ZONES = [
  'America/New_York', // DST at 02:00
  'America/Havana', // DST changes at midnight (00:00 → 01:00, 01:00 → 00:00)
  'America/Santiago', // DST at midnight, southern hemisphere
  'America/Sao_Paulo', // DST ended at midnight until 2019
  'Australia/Lord_Howe', // 30-minute DST
  'Asia/Kathmandu', // +05:45
  'Pacific/Chatham', // +12:45 / +13:45
  'Europe/Dublin', // "negative" DST in tzdata
  'Africa/Casablanca', // DST suspended during Ramadan
  'Pacific/Apia', // skipped 2011-12-30
  'America/Phoenix', // no DST
  'UTC',
];

describe('LocalClock.localDate', () => {
  it('equals Luxon for instants across years, every quarter-hour around each zone\'s offset changes, computed and memoised', () => {
    const clock = new LocalClock();
    const from = DateTime.fromISO('2011-01-01T00:00:00Z').toMillis();
    const to = DateTime.fromISO('2028-01-01T00:00:00Z').toMillis();
    let checked = 0;
    for (const zone of ZONES) {
      const instants: number[] = [];
      // Random instants over 17 years (a fixed LCG: the same instants every run).
      let x = 12345;
      for (let i = 0; i < 1000; i++) {
        x = (x * 1103515245 + 12345) % 2147483648;
        instants.push(from + Math.floor((x / 2147483648) * (to - from)));
      }
      // Every quarter-hour from a day before to a day after each offset change (found by 12-hour steps).
      let before = DateTime.fromMillis(from, { zone }).offset;
      for (let ms = from; ms < to; ms += 43_200_000) {
        const after = DateTime.fromMillis(ms + 43_200_000, { zone }).offset;
        if (after !== before) for (let q = ms - 43_200_000; q <= ms + 86_400_000; q += 900_000) instants.push(q, q - 1);
        before = after;
      }
      const wants = instants.map((ms) => DateTime.fromMillis(ms, { zone }).toISODate());
      for (const pass of [1, 2]) {
        instants.forEach((ms, i) => {
          const got = clock.localDate(zone, ms);
          if (got !== wants[i]) expect({ zone, ms, pass, got }).toEqual({ zone, ms, pass, got: wants[i] });
          checked++;
        });
      }
      expect(clock.today(zone, new Date(instants[0]!))).toBe(DateTime.fromMillis(instants[0]!, { zone }).toISODate());
    }
    expect(checked).toBeGreaterThan(ZONES.length * 2000);
  });

  it('a small memo is cleared and keeps answering right', () => {
    const clock = new LocalClock(5);
    for (let ms = Date.UTC(2026, 0, 1); ms < Date.UTC(2026, 2, 1); ms += 3600_000 * 7) {
      expect(clock.localDate('America/New_York', ms)).toBe(DateTime.fromMillis(ms, { zone: 'America/New_York' }).toISODate());
    }
  });
});

describe('LocalClock.addDays', () => {
  it('equals Luxon across month ends, leap days and years, computed and memoised, with a memo that clears', () => {
    for (const clock of [new LocalClock(), new LocalClock(7)]) {
      let checked = 0;
      for (let d = DateTime.fromISO('2027-12-20', { zone: 'UTC' }); d.toISODate()! < '2028-03-10'; d = d.plus({ days: 1 })) {
        const date = d.toISODate()!;
        for (const days of [-400, -31, -1, 0, 1, 7, 8, 31, 365]) {
          const expected = d.plus({ days }).toISODate();
          // First call computes, the second comes from the memo (or from a cleared one).
          expect(clock.addDays(date, days), `${date} + ${days}`).toBe(expected);
          expect(clock.addDays(date, days), `${date} + ${days} again`).toBe(expected);
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(700);
    }
  });
});

describe('LocalClock.format', () => {
  it('equals Luxon with the zone\'s own offset or a known one, computed, memoised and after its memo clears', () => {
    for (const clock of [new LocalClock(), new LocalClock(5)]) {
      for (const zone of ['America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu']) {
        // Every 5 hours over two years: both sides of each daylight-saving change.
        for (let ms = Date.UTC(2026, 0, 1); ms < Date.UTC(2028, 0, 1); ms += 5 * 3600_000) {
          const d = DateTime.fromMillis(ms, { zone });
          const expected = d.toISO({ suppressMilliseconds: true });
          expect(clock.format(zone, ms), `${zone} ${ms}`).toBe(expected);
          expect(clock.format(zone, ms), `${zone} ${ms} again`).toBe(expected);
          expect(clock.format(zone, ms, d.offset), `${zone} ${ms} with its offset`).toBe(expected);
        }
      }
    }
  });
});
