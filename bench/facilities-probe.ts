/**
 * Facilities by ZIP near New York on a ~5,000 and a ~50,000 provider-location directory in one
 * database (docs/performance.md, "Directory reads (issue #20 §7)"): each statement of one request
 * per directory with its `EXPLAIN (ANALYZE, BUFFERS)`, and its own time (p50 of `PROBE_RUNS` runs).
 *
 * `PROBE_DIR=<folder> node --import tsx bench/facilities-probe.ts`: the PGlite data directory that
 * `PROBE_KEEP_DIR=<folder> node --import tsx bench/page100-probe.ts` left (with `dev-<size>.txt`).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CompiledQuery } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { searchFacilities } from '../src/domain/directory/facilities.js';
import { zipCentroid } from '../src/domain/directory/geo.js';
import { explain, planText, StatementCapture } from '../test/helpers/statement-capture.js';
import { percentile } from './timed-gets.js';

const say = (s: string): void => void process.stdout.write(`${s}\n`);

async function main(): Promise<void> {
  const dir = process.env.PROBE_DIR!;
  const runs = Number(process.env.PROBE_RUNS ?? 100);
  const h = await openDatabase({ dataDir: dir });
  const capture = new StatementCapture();
  const db = capture.on(h.db);
  const origin = zipCentroid(process.env.PROBE_ZIP ?? '10001')!;
  const devs = readdirSync(dir).filter((f) => /^dev-\d+\.txt$/.test(f)).map((f) => ({ size: Number(/\d+/.exec(f)![0]), id: readFileSync(join(dir, f), 'utf8').trim() }));
  for (const d of devs.sort((a, b) => a.size - b.size)) {
    const caller = { env: 'sandbox' as const, developerId: d.id };
    const search = () => searchFacilities(db, caller, { origin, maxDistanceMi: 100, page: 0, pageSize: 10 }, 'http://x');
    let total = 0;
    const statements = await capture.during(h.db, async () => {
      total = (await search()).total;
    });
    say(`\n=== ${d.size} provider-locations: total_count ${total}, ${statements.length} statements`);
    for (const q of statements) {
      const plan = await explain(h.db, q, { analyze: true });
      const times: number[] = [];
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        await h.db.executeQuery(CompiledQuery.raw(q.sql, [...q.parameters]));
        times.push(performance.now() - t0);
      }
      say(`-- p50 ${percentile(times, 50).toFixed(2)} ms: ${q.sql.replace(/\s+/g, ' ').slice(0, 160)}`);
      for (const l of planText(plan)) say(`   ${l}`);
    }
    const whole: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await search();
      whole.push(performance.now() - t0);
    }
    say(`whole searchFacilities p50 ${percentile(whole, 50).toFixed(2)} ms`);
  }
  await h.close();
}

await main();
