/**
 * A/B of the availability summary refresh (src/domain/availability/summary-refresh.ts) between the
 * `src` of a commit (`--before <commit>`, extracted with `git archive` as bench/evaluator.ts does)
 * and the current `src`, on one database in one process: a generated directory of ~2,000
 * provider-locations, then rounds in which each side (order flipping every round) deletes the stored
 * summaries and refreshes them all, as the refresh job's passes would, timed in CPU and wall time.
 *
 * `node --import tsx bench/summary-refresh-ab.ts --before <commit> [--rounds 5]`; PGlite in memory,
 * or a scratch schema on `BENCH_DATABASE_URL`. Prints the medians; writes nothing.
 */
import { join } from 'node:path';
import { sql } from 'kysely';
import { migrateToLatest } from '../src/db/migrate.js';
import type { Db } from '../src/db/database.js';
import type { Env } from '../src/db/schema.js';
import { createDeveloper } from '../src/domain/developers/create-developer.js';
import { refreshAvailabilitySummaries } from '../src/domain/availability/summary-refresh.js';
import { ensureDirectory } from './scheduling.js';
import { benchDatabase } from './scratch-schema.js';
import { sourceTreeOf } from './source-tree.js';

type Refresh = (db: Db, opts: { env: Env }) => Promise<number>;

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};

async function refreshOfCommit(commit: string): Promise<{ refresh: Refresh; cleanup: () => void }> {
  const tree = sourceTreeOf(commit, 'refresh-before');
  const mod = (await import(join(tree.src, 'domain/availability/summary-refresh.ts'))) as { refreshAvailabilitySummaries: Refresh };
  return { refresh: mod.refreshAvailabilitySummaries, cleanup: tree.cleanup };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const commit = arg('before');
  if (!commit) throw new Error('--before <commit> is required');
  const rounds = Number(arg('rounds') ?? 5);
  const h = await benchDatabase(process.env.BENCH_DATABASE_URL, { prefix: 'bench_refresh', poolSize: 4 });
  await migrateToLatest(h.db);
  const dev = await createDeveloper(h.db, { env: 'sandbox', name: 'refresh-ab' });
  await ensureDirectory(h.db, 'sandbox', dev.developer_id, 2_000);
  const before = await refreshOfCommit(commit);
  const sides: [string, Refresh][] = [[`before (${commit})`, before.refresh], ['after', refreshAvailabilitySummaries]];
  const cpu: Record<string, number[]> = {};
  const wall: Record<string, number[]> = {};
  let summaries = 0;
  for (let r = 0; r < rounds; r++) {
    for (const [name, refresh] of r % 2 ? [...sides].reverse() : sides) {
      await sql`DELETE FROM availability_summaries`.execute(h.db);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      let n = 0;
      for (let done = -1; done !== 0; ) n += done = await refresh(h.db, { env: 'sandbox' });
      const c = process.cpuUsage(c0);
      summaries = n;
      (cpu[name] ??= []).push((c.user + c.system) / 1000);
      (wall[name] ??= []).push(performance.now() - t0);
    }
  }
  process.stdout.write(`${h.label}; ${summaries} summaries per refresh; medians of ${rounds} rounds\n`);
  for (const [name] of sides) {
    process.stdout.write(`  ${name}: CPU ${median(cpu[name]!).toFixed(0)} ms (${((median(cpu[name]!) * 1000) / summaries).toFixed(0)} µs per summary), wall ${median(wall[name]!).toFixed(0)} ms; rounds CPU ${cpu[name]!.map((x) => x.toFixed(0)).join(', ')}\n`);
  }
  before.cleanup();
  await h.close();
}

await main();
