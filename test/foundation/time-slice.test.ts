import { describe, expect, it } from 'vitest';
import { TimeSlice } from '../../src/lib/time-slice.js';

/** Keeps the thread busy for `ms` of wall time (a stand-in for a slice of computation). */
const busy = (ms: number): void => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe('TimeSlice', () => {
  it('lets I/O and timers run in the middle of a long computation, and only when the budget is used', async () => {
    const slice = new TimeSlice(4);
    const events: string[] = [];
    setTimeout(() => events.push('timer'), 0);
    let yields = 0;
    for (let i = 0; i < 40; i++) {
      busy(1);
      const before = events.length;
      await slice.pause();
      if (events.length > before) yields++;
      events.push(`step ${i}`);
    }
    // The timer ran before the 40 ms of steps were over, not after them.
    expect(events.indexOf('timer')).toBeGreaterThan(0);
    expect(events.indexOf('timer')).toBeLessThan(events.length - 1);
    expect(yields).toBeGreaterThanOrEqual(1);
  });

  it('resolves without yielding while the slice is within its budget', async () => {
    const slice = new TimeSlice(10_000);
    let ran = false;
    setImmediate(() => (ran = true));
    for (let i = 0; i < 100; i++) await slice.pause();
    expect(ran).toBe(false);
  });
});
