/**
 * The SQL statements a piece of code runs, and their plans: `StatementCapture` is a Kysely plugin
 * that records every statement run through a handle made with `capture.on(db)` while recording, so
 * that a test (or a benchmark) can hand the same handle to the app, make one request and EXPLAIN
 * what it ran (docs/performance.md, "Directory reads (issue #20 §7)"). Statements compiled once and
 * run as they are (`db.executeQuery(compiled)`, src/db/fast/statement-template.ts) pass no plugin;
 * the handle records those too when they are run on it (not inside a transaction it opens).
 */
import { CompiledQuery, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type UnknownRow } from 'kysely';
import type { QueryId } from 'kysely';
import type { Db } from '../../src/db/database.js';
import { wantsGenericPlan } from '../../src/db/generic-plan.js';

export class StatementCapture implements KyselyPlugin {
  private recorded: ({ node: RootOperationNode; queryId: QueryId } | { compiled: CompiledQuery })[] = [];
  private recording = false;

  /** `db` with this capture attached: statements run through it are recorded while recording. */
  on(db: Db): Db {
    const plugged = db.withPlugin(this);
    return new Proxy(plugged, {
      get: (target, prop) => {
        const value: unknown = Reflect.get(target, prop);
        if (prop === 'executeQuery') {
          return (q: Parameters<Db['executeQuery']>[0], queryId?: QueryId) => {
            if (this.recording && isCompiled(q)) this.recorded.push({ compiled: q });
            return target.executeQuery(q, queryId);
          };
        }
        // Kysely's own fields are private (#): its methods run on it, not on the proxy.
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.recording) this.recorded.push({ node: args.node, queryId: args.queryId });
    return args.node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }

  /** Runs `fn` and returns the statements it ran (compiled by `db`, in the order they started). */
  async during(db: Db, fn: () => Promise<unknown>): Promise<CompiledQuery[]> {
    this.recorded = [];
    this.recording = true;
    try {
      await fn();
    } finally {
      this.recording = false;
    }
    const executor = db.getExecutor();
    return this.recorded.map((r) => ('compiled' in r ? r.compiled : executor.compileQuery(r.node, r.queryId)));
  }
}

/** Whether `q` was compiled before it was handed to `executeQuery` (no plugin sees it then). */
function isCompiled(q: unknown): q is CompiledQuery {
  return typeof q === 'object' && q !== null && typeof (q as { sql?: unknown }).sql === 'string' && typeof (q as { compile?: unknown }).compile !== 'function';
}

/** Whether `text` is a read (SELECT or WITH), after a leading comment such as the generic-plan mark (src/db/generic-plan.ts). */
export function isRead(text: string): boolean {
  return /^\s*(\/\*[^*]*\*\/\s*)?(select|with)\b/i.test(text);
}

/** One node of a plan (`EXPLAIN (FORMAT JSON)`), with the fields read here. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Plan Rows'?: number;
  Plans?: PlanNode[];
  [key: string]: unknown;
}

/** `v` as an SQL literal for `EXECUTE` (PostgreSQL coerces an untyped literal to the parameter's type). */
function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  const quote = (x: string) => `'${x.replace(/'/g, "''")}'`;
  if (v instanceof Date) return quote(v.toISOString());
  if (Array.isArray(v)) {
    const item = (x: unknown) => (x === null || x === undefined ? 'NULL' : `"${String(x instanceof Date ? x.toISOString() : x).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);
    return quote(`{${v.map(item).join(',')}}`);
  }
  if (typeof v === 'object') return quote(JSON.stringify(v));
  return quote(String(v));
}

let explained = 0;

/**
 * The plan of `q` as the service runs it with these parameters (`EXPLAIN (FORMAT JSON)`, with
 * `ANALYZE, BUFFERS` when `analyze`): planned for these values, except a statement marked for its
 * generic plan (src/db/generic-plan.ts), which is prepared and explained under `force_generic_plan`
 * as both engines run it. `generic` overrides the mark: true explains the generic plan of any
 * statement (the one PostgreSQL's `auto` may settle on after five executions), false the custom one.
 */
export async function explain(db: Db, q: CompiledQuery, opts: { analyze?: boolean; generic?: boolean } = {}): Promise<PlanNode> {
  const options = opts.analyze ? 'ANALYZE, BUFFERS, FORMAT JSON' : 'FORMAT JSON';
  const first = (r: QueryResult<Record<string, unknown>>): PlanNode => {
    const cell = Object.values(r.rows[0]!)[0];
    const json = (typeof cell === 'string' ? JSON.parse(cell) : cell) as { Plan: PlanNode }[];
    return json[0]!.Plan;
  };
  if (!(opts.generic ?? wantsGenericPlan(q.sql)) || q.parameters.length === 0) {
    return first(await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(`EXPLAIN (${options}) ${q.sql}`, [...q.parameters])));
  }
  const name = `explained_${++explained}`;
  return db.transaction().execute(async (trx) => {
    await trx.executeQuery(CompiledQuery.raw('SET LOCAL plan_cache_mode = force_generic_plan', []));
    await trx.executeQuery(CompiledQuery.raw(`PREPARE ${name} AS ${q.sql}`, []));
    const plan = first(await trx.executeQuery<Record<string, unknown>>(CompiledQuery.raw(`EXPLAIN (${options}) EXECUTE ${name}(${q.parameters.map(literal).join(', ')})`, [])));
    await trx.executeQuery(CompiledQuery.raw(`DEALLOCATE ${name}`, []));
    return plan;
  });
}

/** Every node of a plan, depth first. */
export function planNodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(planNodes)];
}

/** The plan as indented text lines: node type, relation, index, rows (actual when analysed, else estimated), conditions. */
export function planText(plan: PlanNode, depth = 0): string[] {
  const rows = plan['Actual Rows'] !== undefined ? `rows=${plan['Actual Rows']} loops=${plan['Actual Loops']}` : `est rows=${plan['Plan Rows']}`;
  const rel = plan['Relation Name'] ? ` on ${plan['Relation Name']}` : '';
  const idx = plan['Index Name'] ? ` using ${plan['Index Name']}` : '';
  const time = plan['Actual Total Time'] !== undefined ? ` ${plan['Actual Total Time']} ms` : '';
  const buffers = plan['Shared Hit Blocks'] !== undefined ? ` hit=${plan['Shared Hit Blocks']} read=${plan['Shared Read Blocks']}` : '';
  const conds = ['Index Cond', 'Recheck Cond', 'Filter'].filter((k) => plan[k] !== undefined).map((k) => ` ${k}: ${String(plan[k])}`).join(';');
  return [`${'  '.repeat(depth)}${plan['Node Type']}${rel}${idx} (${rows}${time}${buffers})${conds}`, ...(plan.Plans ?? []).flatMap((p) => planText(p, depth + 1))];
}
