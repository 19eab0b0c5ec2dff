/**
 * A Kysely dialect for PGlite that is safe under concurrency.
 *
 * PGlite is a single PostgreSQL session. Two interleaved transactions on it would share one
 * session and silently commit or roll back each other's statements (the failure seen with the
 * `kysely-pglite` package). This dialect routes every transaction through `PGlite.transaction()`,
 * which holds PGlite's own transaction lock for the whole transaction, and every statement outside a
 * transaction through `PGlite.query()`, which takes the same lock. So a transaction runs alone, and
 * statements from other callers wait until it commits or rolls back.
 *
 * Consequence for callers: inside a transaction, use only the transaction handle. A query on the
 * root `Kysely` instance from inside a transaction waits for that transaction and deadlocks.
 *
 * Statements themselves run as named prepared statements in one call into the engine each
 * (pglite-statements.ts), under the same locks `PGlite.query()` takes: outside a transaction PGlite's
 * transaction lock and then its query lock; inside one, the query lock of the transaction that holds
 * the transaction lock. `PGliteQueryDialect` keeps the former path (one `PGlite.query()` per
 * statement) for comparison in bench/pglite-dialect.ts.
 */
import type { PGlite, Transaction as PGliteTransaction } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { runStatement, statementsOf } from './pglite-statements.js';

interface OpenTransaction {
  tx: PGliteTransaction;
  finish: (outcome: 'commit' | 'rollback') => void;
  done: Promise<void>;
}

/** How a statement is executed: as a named statement in one engine call, or through `PGlite.query()`. */
type Execution = 'prepared' | 'query';

class PGliteConnection implements DatabaseConnection {
  #open: OpenTransaction | undefined;

  constructor(
    private readonly pglite: PGlite,
    private readonly execution: Execution,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const result = this.execution === 'prepared' ? await this.#runPrepared<R>(compiled) : await (this.#open?.tx ?? this.pglite).query<R>(compiled.sql, compiled.parameters as unknown[]);
    const affected = result.affectedRows;
    return {
      rows: result.rows,
      ...(affected !== undefined ? { numAffectedRows: BigInt(affected) } : {}),
    };
  }

  /** The same locks as `PGlite.query()` / `Transaction.query()`, then one engine call (pglite-statements.ts). */
  async #runPrepared<R>(compiled: CompiledQuery) {
    const pglite = this.pglite;
    const params = compiled.parameters;
    const cache = statementsOf(pglite);
    if (this.#open) {
      if (this.#open.tx.closed) throw new Error('Transaction is closed');
      return pglite._runExclusiveQuery(() => runStatement<R>(pglite, cache, compiled.sql, params, false));
    }
    await pglite._checkReady();
    if (writesThrough(pglite)) return pglite._runExclusiveTransaction(() => pglite._runExclusiveQuery(() => runStatement<R>(pglite, cache, compiled.sql, params, true)));
    return pglite._runExclusiveTransaction(() =>
      pglite._runExclusiveQuery(async () => {
        const result = await runStatement<R>(pglite, cache, compiled.sql, params, true);
        await pglite.syncToFs();
        return result;
      }),
    );
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite dialect does not support streaming');
  }

  /** Opens a PGlite transaction and keeps it (and PGlite's lock) until commit or rollback. */
  async begin(settings: TransactionSettings): Promise<void> {
    if (this.#open) throw new Error('transaction already open on this connection');
    let started!: (tx: PGliteTransaction) => void;
    let failedToStart!: (err: unknown) => void;
    const startedPromise = new Promise<PGliteTransaction>((res, rej) => {
      started = res;
      failedToStart = rej;
    });
    let finish!: (o: 'commit' | 'rollback') => void;
    const outcome = new Promise<'commit' | 'rollback'>((res) => (finish = res));
    const done = this.pglite
      .transaction(async (tx) => {
        if (settings.isolationLevel) {
          await tx.query(`SET TRANSACTION ISOLATION LEVEL ${settings.isolationLevel.toUpperCase()}`);
        }
        started(tx);
        if ((await outcome) === 'rollback') await tx.rollback();
      })
      .then(
        () => undefined,
        (err: unknown) => {
          failedToStart(err);
          throw err;
        },
      );
    // Swallow here; commit()/rollback() re-await `done` and surface the error.
    done.catch(() => undefined);
    const tx = await startedPromise;
    this.#open = { tx, finish, done };
  }

  async end(outcome: 'commit' | 'rollback'): Promise<void> {
    const open = this.#open;
    if (!open) throw new Error('no open transaction');
    this.#open = undefined;
    open.finish(outcome);
    await open.done;
  }
}

class PGliteDriver implements Driver {
  constructor(
    private readonly pglite: PGlite,
    private readonly execution: Execution,
  ) {}
  async init(): Promise<void> {
    await this.pglite.waitReady;
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    return new PGliteConnection(this.pglite, this.execution);
  }
  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await (conn as PGliteConnection).begin(settings);
  }
  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await (conn as PGliteConnection).end('commit');
  }
  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await (conn as PGliteConnection).end('rollback');
  }
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {
    if (!this.pglite.closed) await this.pglite.close();
  }
}

/**
 * Whether `pglite`'s files need no sync after a statement: a data directory on Node's file system or
 * in memory, where every write goes through at once (PGlite's `syncToFs()` is then a no-op behind a
 * lock of its own, ~4 µs a statement). Browser stores (`idb://`, `opfs-ahp://`) still sync.
 */
function writesThrough(pglite: PGlite): boolean {
  const dir = pglite.dataDir;
  return !dir || dir.startsWith('memory://') || !dir.includes('://');
}

/** Kysely dialect over one PGlite instance; see the module comment for the locking rule. */
export class PGliteDialect implements Dialect {
  protected readonly execution: Execution = 'prepared';
  constructor(private readonly pglite: PGlite) {}
  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite, this.execution);
  }
  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
}

/** The former dialect: every statement through `PGlite.query()` (six engine calls, parsed each time). For the bench only. */
export class PGliteQueryDialect extends PGliteDialect {
  protected override readonly execution: Execution = 'query';
}
