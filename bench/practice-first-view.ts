/**
 * The practice workspace's first view on a big directory (issue #18: "first view < 1 s on the 50k
 * directory"): the page, its script and style, `GET /practice/v1/me` and the calendar week of the
 * practice's first provider, each timed as the workspace asks for them after sign-in, on a cold
 * process (first request of each) and then warm (median of 10). `BENCH_DIRECTORY_PLS` (default
 * 50000) provider-locations are generated and imported first; `BENCH_DATABASE_URL` for PostgreSQL.
 *
 * `node --import tsx bench/practice-first-view.ts`
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { generateDirectory } from '../src/domain/directory/seed.js';
import { analyzeDirectory } from '../src/domain/directory/write/analyze.js';
import { writeDirectory } from '../src/domain/directory/write/write-directory.js';
import { createPracticeAdmin } from '../src/domain/practices/members.js';
import { buildApp } from '../src/http/app.js';
import { workspaceToken } from '../test/helpers/practice.js';

const PLS_PER_PROVIDER = 1.25;
const say = (s: string) => process.stdout.write(`${s}\n`);

async function main(): Promise<void> {
  const url = process.env.BENCH_DATABASE_URL;
  const schema = `bench_practice_${randomBytes(4).toString('hex')}`;
  const h = url ? await openDatabase({ databaseUrl: url, schema, poolSize: 10 }) : await openDatabase({ inMemory: true });
  try {
    await migrateToLatest(h.db);
    const pls = Number(process.env.BENCH_DIRECTORY_PLS ?? 50000);
    const doc = generateDirectory(Math.round(pls / PLS_PER_PROVIDER), 7);
    let t0 = performance.now();
    const summary = await h.db.transaction().execute((trx) => writeDirectory(trx, 'sandbox', doc));
    await analyzeDirectory(h.db);
    say(`${url ? 'PostgreSQL' : 'PGlite'}: ${summary.provider_locations} provider-locations written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const config = loadConfig({ LOG_LEVEL: 'silent', KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'), RATE_LIMIT_PER_MINUTE: '10000000' });
    const app = await buildApp({ config, db: h.db });
    // The practice with the most providers: the heaviest first view.
    const practice = (await sql<{ practice_id: string; n: number }>`
      SELECT practice_id, count(*)::int AS n FROM providers WHERE env = 'sandbox' GROUP BY practice_id ORDER BY n DESC, practice_id LIMIT 1`.execute(h.db)).rows[0]!;
    const password = 'bench-password-0123';
    const admin = await createPracticeAdmin(h.db, 'sandbox', { practiceId: practice.practice_id, email: 'bench-admin@example.org', password });
    const token = await workspaceToken({ app, config, db: h.db } as never, { email: admin.email, password });
    const auth = { authorization: `Bearer ${token}` };

    const timed = async (label: string, url: string, headers: Record<string, string> = {}) => {
      const t = performance.now();
      const res = await app.inject({ url, headers });
      const ms = performance.now() - t;
      if (res.statusCode !== 200) throw new Error(`${label}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      return { ms, body: res.body };
    };
    const steps = async () => {
      const out: Record<string, number> = {};
      t0 = performance.now();
      out.page = (await timed('page', '/practice')).ms;
      out.script = (await timed('script', '/practice/app.js')).ms;
      out.style = (await timed('style', '/practice/app.css')).ms;
      const me = await timed('me', '/practice/v1/me', auth);
      out.me = me.ms;
      const provider = (JSON.parse(me.body) as { data: { providers: { provider_id: string }[] } }).data.providers[0]!.provider_id;
      const from = new Date().toISOString().slice(0, 10);
      const to = new Date(Date.now() + 6 * 86_400_000).toISOString().slice(0, 10);
      out.calendar = (await timed('calendar', `/practice/v1/calendar?provider_id=${encodeURIComponent(provider)}&from=${from}&to=${to}`, auth)).ms;
      out.total = performance.now() - t0;
      return out;
    };
    const cold = await steps();
    const warm: Record<string, number>[] = [];
    for (let i = 0; i < 10; i++) warm.push(await steps());
    const median = (k: string) => warm.map((w) => w[k]!).sort((a, b) => a - b)[5]!;
    say(`practice ${practice.practice_id} (${practice.n} providers); one request after another, in process (app.inject):`);
    say('| step | cold ms | warm ms (median of 10) |');
    say('|---|---|---|');
    for (const k of ['page', 'script', 'style', 'me', 'calendar', 'total']) say(`| ${k} | ${cold[k]!.toFixed(1)} | ${median(k).toFixed(1)} |`);
    await app.close();
  } finally {
    if (url) await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(h.db).catch(() => undefined);
    await h.close();
  }
}

await main();
