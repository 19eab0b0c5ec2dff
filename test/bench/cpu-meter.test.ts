import { readdirSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { cpuMeter, formatCpu, threadCpuUs } from '../../bench/cpu-meter.js';

/** Keeps this thread busy for `ms` of wall time. */
function spin(ms: number): void {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
  expect(x).toBeGreaterThan(0);
}

/** CPU time (µs) of this process's threads other than the main one, from /proc (10 ms ticks). */
function otherThreadsUs(): number {
  let us = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    if (Number(tid) === process.pid) continue;
    try {
      us += threadCpuUs(tid);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return us;
}

describe('bench/cpu-meter.ts', () => {
  it('counts this thread\'s CPU per request, and nothing for an idle wait', async () => {
    const meter = cpuMeter();
    const busy = await meter.mark();
    const process0 = process.cpuUsage();
    const others0 = otherThreadsUs();
    spin(300);
    const used = process.cpuUsage(process0);
    const othersUs = otherThreadsUs() - others0;
    const processUs = used.user + used.system;
    const spun = (await meter.since(busy, 1))!;
    // The spinning thread's CPU is the process's (from getrusage) less its other threads' (GC
    // helpers, workers: busy at times in a loaded run), whatever share of the host it got, within
    // the 10 ms ticks /proc counts in at each end.
    expect(processUs).toBeGreaterThan(0);
    expect(spun.mainUs).toBeLessThanOrEqual(processUs + 20_000);
    expect(spun.mainUs).toBeGreaterThanOrEqual(0.8 * (processUs - othersUs) - 30_000);
    if (processUs >= 30_000) expect(spun.mainUs).toBeGreaterThan(0);
    expect(spun.serverUs).toBeUndefined();
    // Per request: the same time divided (a tick more at most, read a moment later).
    const perTen = (await meter.since(busy, 10))!.mainUs;
    expect(perTen).toBeGreaterThanOrEqual(Math.floor(spun.mainUs / 10));
    expect(perTen).toBeLessThanOrEqual(Math.ceil(spun.mainUs / 10) + 1_000);

    // An idle wait counts CPU, not wall time: at most what the process used meanwhile (other work of
    // the test runner's thread may run in it under load), and far below the 300 ms waited.
    const idle = await meter.mark();
    const idle0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 300));
    const idleProcess = process.cpuUsage(idle0);
    const idleUs = (await meter.since(idle, 1))!.mainUs;
    expect(idleUs).toBeLessThanOrEqual(idleProcess.user + idleProcess.system + 20_000);
    expect(idleUs).toBeLessThanOrEqual(150_000);
    expect(await meter.since(idle, 0)).toBeUndefined();
  });

  it('formats the main thread alone, or with the server side', () => {
    expect(formatCpu({ mainUs: 540 })).toBe('540');
    expect(formatCpu({ mainUs: 118, serverUs: 71 })).toBe('118 + 71');
    expect(formatCpu(undefined)).toBe('–');
  });

  const url = process.env.TEST_DATABASE_URL;
  it.skipIf(!url)('counts the PostgreSQL backends of this process\'s connections, not the meter\'s own', async () => {
    const admin = new pg.Client({ connectionString: url });
    const worker = new pg.Client({ connectionString: url });
    await admin.connect();
    await worker.connect();
    try {
      const meter = cpuMeter({ admin, port: Number(new URL(url!).port || 5432) });
      const before = await meter.mark();
      // About a quarter of a second of one backend's CPU.
      await worker.query('SELECT count(*) FROM generate_series(1, 4000000)');
      const busy = (await meter.since(before, 1))!;
      expect(busy.serverUs).toBeGreaterThanOrEqual(100_000);

      // Work on the meter's own connection does not count.
      const quiet = await meter.mark();
      await admin.query('SELECT count(*) FROM generate_series(1, 4000000)');
      expect((await meter.since(quiet, 1))!.serverUs).toBeLessThanOrEqual(20_000);
    } finally {
      await worker.end();
      await admin.end();
    }
  });
});
