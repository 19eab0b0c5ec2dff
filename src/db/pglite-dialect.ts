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

interface OpenTransaction {
  tx: PGliteTransaction;
  finish: (outcome: 'commit' | 'rollback') => void;
  done: Promise<void>;
}

class PGliteConnection implements DatabaseConnection {
  #open: OpenTransaction | undefined;

  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const runner = this.#open?.tx ?? this.pglite;
    const result = await runner.query<R>(compiled.sql, compiled.parameters as unknown[]);
    const affected = result.affectedRows;
    return {
      rows: result.rows,
      ...(affected !== undefined ? { numAffectedRows: BigInt(affected) } : {}),
    };
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
  constructor(private readonly pglite: PGlite) {}
  async init(): Promise<void> {
    await this.pglite.waitReady;
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    return new PGliteConnection(this.pglite);
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

/** Kysely dialect over one PGlite instance; see the module comment for the locking rule. */
export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGlite) {}
  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite);
  }
  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
}
