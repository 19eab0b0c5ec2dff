/**
 * One-at-a-time GET timing from a worker thread (bench/timed-gets-worker.mjs), for the directory
 * benches that measure single requests (bench/directory-reads.ts, bench/page100-probe.ts): the
 * client never shares the measured server's event loop.
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

/** The `p`th percentile of `xs` (nearest rank); NaN when empty. */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
}

/** A client in its own worker thread; `close()` ends the thread. */
export class TimedGets {
  #worker: Worker | undefined;
  #calls = 0;

  /** Times `urls` one after another over one connection; throws unless every answer is 200. */
  async get(urls: string[], headers: Record<string, string>): Promise<number[]> {
    const w = (this.#worker ??= new Worker(join(import.meta.dirname, 'timed-gets-worker.mjs')));
    const id = ++this.#calls;
    const answer = new Promise<{ id: number; ms?: number[]; statuses?: number[]; error?: string }>((resolve) => {
      const on = (m: { id: number }) => {
        if (m.id !== id) return;
        w.off('message', on);
        resolve(m);
      };
      w.on('message', on);
    });
    w.postMessage({ id, urls, headers });
    const m = await answer;
    if (m.error) throw new Error(m.error);
    const bad = m.statuses!.findIndex((s) => s !== 200);
    if (bad >= 0) throw new Error(`GET ${urls[bad]}: ${m.statuses![bad]}`);
    return m.ms!;
  }

  async close(): Promise<void> {
    await this.#worker?.terminate();
  }
}
