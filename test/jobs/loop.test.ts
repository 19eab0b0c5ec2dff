/**
 * The shared loop of the background jobs (src/jobs/loop.ts), with real timers and short intervals:
 * passes on the interval, backlog, kick, stop, failures logged without values, counters.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { startLoop, type Job, type PassContext } from '../../src/jobs/loop.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const silent = pino({ level: 'silent' });

async function until(cond: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await sleep(5);
  }
}

/** A logger writing parsed JSON lines into `lines` (and the raw text into `raw`). */
function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      raw.push(String(chunk));
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines, raw };
}

/** A job whose pass starts are recorded; `items(n)` says what pass n (from 1) reports. */
function recordingJob(over: Partial<Job> & { items?: (n: number, ctx: PassContext) => Promise<number> | number } = {}) {
  const { items, ...rest } = over;
  const starts: number[] = [];
  const job: Job = {
    name: 'test-job',
    title: 'test job',
    intervalMs: 20,
    async pass(ctx) {
      starts.push(Date.now());
      return items ? items(starts.length, ctx) : 1;
    },
    ...rest,
  };
  return { job, starts };
}

describe('the job loop', () => {
  it('runs a first pass at once, then one every interval, and counts them', async () => {
    const { job, starts } = recordingJob({ intervalMs: 300 });
    const t0 = Date.now();
    const loop = startLoop(job, silent);
    try {
      await until(() => starts.length >= 3);
    } finally {
      await loop.stop();
    }
    expect(starts[0]! - t0).toBeLessThan(250);
    // Each pass waits the interval after the previous one (timers may fire a millisecond early).
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(298);
    expect(loop.stats()).toMatchObject({ job: 'test-job', passes: starts.length, failures: 0, items: starts.length });
  });

  it('waits firstPassAfterMs before the first pass', async () => {
    const { job, starts } = recordingJob({ intervalMs: 10, firstPassAfterMs: 150 });
    const t0 = Date.now();
    const loop = startLoop(job, silent);
    try {
      await sleep(100);
      expect(starts).toEqual([]);
      await until(() => starts.length >= 1);
      expect(starts[0]! - t0).toBeGreaterThanOrEqual(148);
    } finally {
      await loop.stop();
    }
  });

  it('backlog: a pass that reports a full batch is followed by the next at once, not after the interval', async () => {
    // Three full batches of 5, then 2: four passes, far sooner than one interval.
    const { job, starts } = recordingJob({ intervalMs: 60_000, batch: 5, items: (n) => (n <= 3 ? 5 : 2) });
    const loop = startLoop(job, silent);
    try {
      await until(() => starts.length >= 4, 2_000);
      await sleep(100);
      expect(starts).toHaveLength(4);
      expect(loop.stats()).toMatchObject({ passes: 4, items: 17 });
    } finally {
      await loop.stop();
    }
    // Without a batch the same job waits the interval after its first pass.
    const plain = recordingJob({ intervalMs: 60_000, items: () => 5 });
    const other = startLoop(plain.job, silent);
    await until(() => plain.starts.length >= 1);
    await sleep(100);
    await other.stop();
    expect(plain.starts).toHaveLength(1);
  });

  it('kick() runs a pass at once, and right after the pass in progress', async () => {
    let release: (() => void) | undefined;
    const { job, starts } = recordingJob({
      intervalMs: 60_000,
      firstPassAfterMs: 60_000,
      items: (n) => (n === 1 ? new Promise<number>((r) => (release = () => r(0))) : 0),
    });
    const loop = startLoop(job, silent);
    try {
      await sleep(50);
      expect(starts).toHaveLength(0);
      loop.kick();
      await until(() => starts.length === 1);
      // Kicked twice while the first pass runs: one more pass, right after it.
      loop.kick();
      loop.kick();
      await sleep(50);
      expect(starts).toHaveLength(1);
      release!();
      await until(() => starts.length === 2);
      await sleep(100);
      expect(starts).toHaveLength(2);
    } finally {
      await loop.stop();
    }
  });

  it('stop() aborts the pass signal, waits for the running pass, and no pass runs after it', async () => {
    let release: (() => void) | undefined;
    let aborted = false;
    let finished = false;
    const { job, starts } = recordingJob({
      intervalMs: 5,
      items: (n, ctx) => {
        if (n < 3) return 1;
        return new Promise<number>((r) => {
          ctx.signal.addEventListener('abort', () => (aborted = true));
          release = () => {
            finished = true;
            r(1);
          };
        });
      },
    });
    const loop = startLoop(job, silent);
    await until(() => starts.length === 3);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await sleep(50);
    expect(aborted).toBe(true);
    expect(stopped).toBe(false);
    release!();
    await stopping;
    expect(finished).toBe(true);
    expect(loop.stats().passes).toBe(3);
    loop.kick();
    await sleep(100);
    expect(starts).toHaveLength(3);
    expect(loop.stats().passes).toBe(3);
  });

  it('a failing pass is logged without its message and counted; the loop goes on', async () => {
    const { logger, lines, raw } = capturingLogger();
    const { job, starts } = recordingJob({
      intervalMs: 10,
      items: (n) => {
        if (n === 2) throw Object.assign(new Error('duplicate key for patient Jane Roe'), { code: '23505' });
        return 1;
      },
    });
    const loop = startLoop(job, logger);
    try {
      await until(() => starts.length >= 4);
    } finally {
      await loop.stop();
    }
    expect(loop.stats()).toMatchObject({ failures: 1, passes: starts.length, items: starts.length - 1 });
    const errors = lines.filter((l) => l.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ msg: 'test job pass failed', err: { name: 'Error', code: '23505' } });
    expect(raw.join('')).not.toContain('Jane Roe');
  });

  it('logError logs a failure inside a pass that does not end it', async () => {
    const { logger, lines, raw } = capturingLogger();
    const { job, starts } = recordingJob({
      intervalMs: 60_000,
      items: (_n, ctx) => {
        ctx.logError(new TypeError('row of Jane Roe'));
        return 3;
      },
    });
    const loop = startLoop(job, logger);
    await until(() => starts.length === 1 && loop.stats().passes === 1);
    await loop.stop();
    expect(loop.stats()).toMatchObject({ failures: 0, items: 3 });
    expect(lines.filter((l) => l.level === 50)).toEqual([expect.objectContaining({ msg: 'test job pass failed', err: expect.objectContaining({ name: 'TypeError' }) })]);
    expect(raw.join('')).not.toContain('Jane Roe');
  });

  it('retire(): no pass follows, kicks included', async () => {
    const { job, starts } = recordingJob({
      intervalMs: 5,
      items: (_n, ctx) => {
        ctx.retire();
        return 0;
      },
    });
    const loop = startLoop(job, silent);
    await until(() => loop.stats().passes === 1);
    loop.kick();
    await sleep(100);
    await loop.stop();
    expect(starts).toHaveLength(1);
  });

  it('counters: items add up, the last duration is that of the last pass', async () => {
    const { job, starts } = recordingJob({
      intervalMs: 10,
      items: async (n) => {
        await sleep(n === 1 ? 200 : 1);
        return n;
      },
    });
    const loop = startLoop(job, silent);
    expect(loop.stats()).toEqual({ job: 'test-job', passes: 0, failures: 0, items: 0, lastDurationMs: undefined });
    await until(() => loop.stats().passes === 1);
    expect(loop.stats().lastDurationMs).toBeGreaterThanOrEqual(195);
    expect(loop.stats().items).toBe(1);
    await until(() => loop.stats().passes >= 3);
    await loop.stop();
    const s = loop.stats();
    expect(s.items).toBe((s.passes * (s.passes + 1)) / 2);
    expect(s.lastDurationMs).toBeLessThan(195);
    expect(starts).toHaveLength(s.passes);
  });
});
