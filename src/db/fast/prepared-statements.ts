/**
 * Named (prepared) statements for PostgreSQL. An unnamed parameterized statement is parsed and
 * planned on every execution; a named one is parsed once per connection and its plan can be reused
 * (PostgreSQL's `plan_cache_mode = auto` still plans per execution when a generic plan looks worse).
 * On the service's short OLTP statements the parse and plan are most of the server's work.
 *
 * Only single statements with parameters are named: pg sends a parameterless text through the
 * simple protocol, which is what multi-statement scripts (migrations) need. The number of distinct
 * names is bounded per process, so texts that vary (`IN` lists of every length) cannot grow the
 * server's per-connection statement cache without limit: past the bound, statements run unnamed, as
 * do texts marked to be planned each time (src/db/generic-plan.ts).
 * Off with `DATABASE_PREPARED_STATEMENTS=false` (e.g. behind a transaction-pooling PgBouncer older
 * than 1.21, which cannot keep prepared statements).
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { wantsGenericPlan, wantsPlanEachTime } from '../generic-plan.js';
import { queryWithGenericPlan } from './generic-plan-query.js';

/** Statement texts longer than this run unnamed (they are rare and their plans are the least reusable). */
const MAX_TEXT_LENGTH = 16_384;

/** Stable statement names for SQL texts, at most `maxNames` of them. */
export class StatementNames {
  readonly #names = new Map<string, string>();
  constructor(private readonly maxNames = 2_000) {}

  /** The name for `text`, or undefined when it should run unnamed. */
  nameFor(text: string): string | undefined {
    const known = this.#names.get(text);
    if (known !== undefined || text.length > MAX_TEXT_LENGTH || this.#names.size >= this.maxNames || wantsPlanEachTime(text)) return known;
    const name = `cb_${createHash('sha1').update(text).digest('base64url')}`;
    this.#names.set(text, name);
    return name;
  }

  get size(): number {
    return this.#names.size;
  }
}

/**
 * Makes `client.query(text, values)` (the form Kysely's PostgreSQL driver uses) run a named
 * statement when `names` gives one, with its generic plan when the text is marked for it
 * (src/db/generic-plan.ts; `queryWithGenericPlan`). Every other form of `query` is passed through
 * unchanged.
 */
export function useNamedStatements(client: pg.PoolClient, names: StatementNames): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (args.length === 2 && typeof text === 'string' && Array.isArray(values) && values.length > 0) {
      const name = names.nameFor(text);
      if (name) return wantsGenericPlan(text) ? queryWithGenericPlan(query, name, text, values) : query({ name, text, values });
    }
    return query(...args);
  };
}
