/**
 * The service's benchmark scenarios. Each capability adds its own module and lists it here; a
 * module exports `async (ctx) => Scenario[]` and may prepare data (seed a directory, book slots)
 * before returning.
 */
import type { Config } from '../src/config.js';
import type { Db } from '../src/db/database.js';
import type { NewDeveloper } from '../src/domain/developers/create-developer.js';
import { directoryScenarios } from './directory.js';
import type { Scenario } from './harness.js';
import { schedulingScenarios } from './scheduling.js';

export interface BenchContext {
  baseUrl: string;
  /** A client-credentials token with every scope, for `creds`' developer. */
  token: string;
  db: Db;
  config: Config;
  creds: NewDeveloper;
  engine: 'pglite' | 'postgres';
}

/**
 * `only` (from `BENCH_ONLY`) skips a group's preparation too when none of its scenario names can
 * match: directory scenarios are all named `directory: …`.
 */
export async function serviceScenarios(ctx: BenchContext, only?: RegExp): Promise<Scenario[]> {
  const wantsDirectory = !only || only.test('directory:') || /directory/.test(only.source);
  return [
    { name: 'GET /healthz', baseline: 'bare', path: '/healthz' },
    { name: 'GET /readyz (database ping)', baseline: 'select', path: '/readyz' },
    { name: 'POST /auth/oauth/token (client credentials)', baseline: 'select', method: 'POST', path: '/auth/oauth/token', body: JSON.stringify({ grant_type: 'client_credentials', client_id: ctx.creds.client_id, client_secret: ctx.creds.client_secret, audience: ctx.config.audience }) },
    // Scheduling first: it measures on a ~10,000 provider-location directory; the directory
    // scenarios then grow the directory to ~50,000.
    ...(await schedulingScenarios({ baseUrl: ctx.baseUrl, token: ctx.token, db: ctx.db })),
    ...(wantsDirectory ? await directoryScenarios(ctx) : []),
  ];
}
