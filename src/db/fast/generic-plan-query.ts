/**
 * A marked statement's generic plan on PostgreSQL (src/db/generic-plan.ts; docs/performance.md,
 * "Plans made once for the hot reads"). Under `plan_cache_mode = auto` PostgreSQL plans the marked
 * reads again on every execution, because their generic plans are estimated costlier than the plans
 * made for their values (an id list of unknown length): measured on PostgreSQL 15, the
 * provider-location view cost ~930 µs of the server's CPU per execution that way and ~100 µs with
 * its generic plan.
 *
 * `plan_cache_mode` is a setting, not a property of a statement, and the plan is chosen when the
 * statement is bound. So the execution is sent as one pipeline of the extended protocol, in one
 * write and one round trip: `SET plan_cache_mode = force_generic_plan` (parsed, bound, executed as
 * the unnamed statement), the named statement's Bind/Describe/Execute (its Parse first, the first
 * time this connection runs it), `RESET plan_cache_mode`, and one Sync. Everything up to a Sync is
 * one transaction (or part of the caller's), so:
 * - the server never leaves the setting changed: the RESET runs in the same transaction, and if
 *   the statement fails the transaction is aborted, the RESET skipped and the SET undone with it
 *   (inside a caller's transaction, by its rollback);
 * - a transaction-pooling proxy keeps the three on one server connection.
 * The caller sees the statement's own result; the SET's and RESET's completions are dropped.
 */
import { createRequire } from 'node:module';
import pg from 'pg';

/** pg's Query, as far as this subclass uses it (its typings do not describe the protocol hooks). */
interface ProtocolQuery {
  text: string;
  name: string;
  values: unknown[];
  types: unknown;
  binary: boolean | undefined;
  prepare(connection: Connection): void;
  hasBeenParsed(connection: Connection): boolean;
  handleError(err: Error, connection: Connection): void;
  handleCommandComplete(msg: unknown, connection: Connection): void;
}
/** pg's connection: the extended protocol's messages (written to the socket, corked by the caller). */
interface Connection {
  submittedNamedStatements: Record<string, string>;
  parse(q: { name: string; text: string; types?: unknown }): void;
  bind(q: { portal: string; statement: string; values?: unknown[]; binary?: boolean | undefined }): void;
  describe(q: { type: 'P'; name: string }): void;
  execute(q: { portal: string }): void;
  sync(): void;
}

const QueryBase = (pg as unknown as { Query: new (config: object, values?: unknown, callback?: unknown) => ProtocolQuery }).Query;
/** How pg turns a parameter into its text form (arrays, dates, buffers, JSON), as its own Query does. */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils') as { prepareValue: (v: unknown) => unknown };

const SET_GENERIC = 'SET plan_cache_mode = force_generic_plan';
const RESET = 'RESET plan_cache_mode';

/** Runs a `SET`/`RESET` as the unnamed statement and portal (no Describe: it returns no rows). */
function runUnnamed(connection: Connection, text: string): void {
  connection.parse({ name: '', text });
  connection.bind({ portal: '', statement: '' });
  connection.execute({ portal: '' });
}

class GenericPlanQuery extends QueryBase {
  #completions = 0;

  /**
   * The pipeline (pg's Query.submit corks the socket around it). The statement's Parse, when this
   * connection has not parsed it yet, goes first: a failed Parse then stops the pipeline before the
   * SET, and pg, which records a statement as parsed at the first ParseComplete of its query, does
   * not take the SET's for it.
   */
  override prepare(connection: Connection): void {
    let values: unknown[];
    try {
      values = this.values.map((v) => prepareValue(v));
    } catch (err) {
      // A parameter pg cannot send (a cyclic object): nothing but the Sync that ends the query.
      connection.sync();
      this.handleError(err as Error, connection);
      return;
    }
    if (!this.hasBeenParsed(connection)) {
      connection.parse({ text: this.text, name: this.name, types: this.types });
      connection.submittedNamedStatements[this.name] = this.text;
    }
    runUnnamed(connection, SET_GENERIC);
    connection.bind({ portal: '', statement: this.name, values, binary: this.binary });
    connection.describe({ type: 'P', name: '' });
    connection.execute({ portal: '' });
    runUnnamed(connection, RESET);
    connection.sync();
  }

  /** Completions come in order: the SET's, the statement's, the RESET's; only the statement's is its result. */
  override handleCommandComplete(msg: unknown, connection: Connection): void {
    if (this.#completions++ === 1) super.handleCommandComplete(msg, connection);
  }
}

/**
 * Runs the named statement `name` (`text`, `values`) with its generic plan through `query` (the
 * client's own `query`), resolving to what `client.query(text, values)` resolves to.
 */
export function queryWithGenericPlan(query: (q: object) => unknown, name: string, text: string, values: unknown[]): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    query(new GenericPlanQuery({ name, text, values }, undefined, (err: Error | null, res: pg.QueryResult) => (err ? reject(err) : resolve(res))));
  });
}
