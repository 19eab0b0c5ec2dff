/**
 * The service's benchmark scenarios, in groups. `npm run bench` (bench/run.ts) takes the groups in
 * order and, for each, prepares it and measures its scenarios before the next group prepares: a
 * group's data (the ~50,000 provider-location directory) never changes what an earlier group
 * measures (scheduling on its ~10,000 provider-locations).
 *
 * A group module exports an async function that prepares data and returns its scenarios, either as
 * `Scenario[]` or as `{ scenarios, lines }`, where `lines` are extra text for bench/results.md
 * (e.g. import times, 5k → 50k scaling ratios): an array, or a function of the group's measured
 * results when the lines depend on them. run.ts prints them after the group's rows and appends them
 * to results.md under the group's name.
 */
import type { Config } from '../src/config.js';
import type { Db } from '../src/db/database.js';
import type { NewDeveloper } from '../src/domain/developers/create-developer.js';
import type { RunningJobs } from '../src/jobs/registry.js';
import { directoryScenarios } from './directory.js';
import type { Result, Scenario } from './harness.js';
import { schedulingScenarios } from './scheduling.js';

export interface BenchContext {
  baseUrl: string;
  /** A client-credentials token with every scope, for `creds`' developer. */
  token: string;
  db: Db;
  config: Config;
  creds: NewDeveloper;
  engine: 'pglite' | 'postgres';
  /** The run's connection counts (`BENCH_CONNECTIONS`). */
  counts: number[];
  /** Starts the service's background jobs as `npm start` runs them beside the API (src/jobs/registry.ts); `stop()` ends them. */
  startJobs: () => BenchJobs;
}

/** The running background jobs, as far as the bench uses them. */
export type BenchJobs = Pick<RunningJobs, 'stop' | 'stats'>;

/** What a group's preparation returns (see the module comment). */
export type GroupOutput = Scenario[] | { scenarios: Scenario[]; lines?: string[] | ((results: Result[]) => string[]) };

export interface ScenarioGroup {
  name: string;
  /** False when `BENCH_ONLY` can match none of the group's scenarios: it is then not even prepared. */
  wanted: boolean;
  /** Prepares the group's data and returns its scenarios (and optional result lines). */
  prepare(): Promise<GroupOutput>;
}

/** The groups in the order they run; `only` (from `BENCH_ONLY`) marks those it cannot match as not wanted. */
export function serviceScenarioGroups(ctx: BenchContext, only?: RegExp): ScenarioGroup[] {
  const last: Scenario[] = [];
  const may = (...names: string[]) => !only || names.some((n) => only.test(n)) || names.some((n) => only.source.includes(n));
  return [
    {
      name: 'core',
      wanted: may('GET /healthz', 'GET /readyz', 'POST /auth/oauth/token'),
      prepare: async () => [
        { name: 'GET /healthz', baseline: 'bare', path: '/healthz' },
        { name: 'GET /readyz (database ping)', baseline: 'select', path: '/readyz' },
        {
          name: 'POST /auth/oauth/token (client credentials)',
          baseline: 'select',
          method: 'POST',
          path: '/auth/oauth/token',
          body: JSON.stringify({ grant_type: 'client_credentials', client_id: ctx.creds.client_id, client_secret: ctx.creds.client_secret, audience: ctx.config.audience }),
        },
      ],
    },
    {
      // Before the directory group: measured on its own ~10,000 provider-location directory.
      name: 'scheduling',
      wanted: may('availability', 'POST /v1/appointments', 'GET /v1/appointments/{id}', 'POST /v1/appointments/reschedule'),
      prepare: () => schedulingScenarios({ baseUrl: ctx.baseUrl, token: ctx.token, db: ctx.db, engine: ctx.engine, counts: ctx.counts, startJobs: ctx.startJobs, later: (s) => last.push(s) }),
    },
    {
      name: 'directory',
      wanted: may('directory:', 'directory'),
      prepare: async (): Promise<GroupOutput> => directoryScenarios(ctx),
    },
    {
      // Rows the scheduling group prepared to run last (the booking row with the background jobs):
      // what the jobs change (evaluated bookings, stored summaries, analysed tables) reaches no other row.
      name: 'last',
      wanted: may('POST /v1/appointments'),
      prepare: async () => last,
    },
  ];
}

/** A group's output as scenarios and a lines function. */
export function normaliseGroup(out: GroupOutput): { scenarios: Scenario[]; lines: (results: Result[]) => string[] } {
  if (Array.isArray(out)) return { scenarios: out, lines: () => [] };
  const lines = out.lines;
  return { scenarios: out.scenarios, lines: typeof lines === 'function' ? lines : () => lines ?? [] };
}
