/**
 * The reads handle over a replica (docs/decisions/0020-read-replicas.md): a Kysely dialect wrapper
 * whose connections run on the replica while `ReplicaState.usable()`, and otherwise, or when the
 * replica fails a statement for a reason the primary would not share (it is down, restarting, or
 * cancelled the statement for a conflict with recovery), run that statement on the primary instead.
 * A read never fails because of the replica. A statement the replica refused as such (bad input, a
 * write in a read-only transaction: a misrouted write) fails as it would on the primary, never
 * silently retried there, so a write sent to the reads handle is found by the tests.
 */
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryCompiler, QueryResult, TransactionSettings } from 'kysely';
import type { Db } from './database.js';
import type { ReplicaState } from './replica-state.js';
import { isDatabaseUnavailable } from './unavailable.js';

/** SQLSTATEs after which the statement is run on the primary instead, and the replica is counted down. */
const DOWN = /^(08|57P0[123]|53300)/;
/** SQLSTATEs of a statement a hot standby cancelled for a conflict with recovery (the primary has none). */
const RECOVERY_CONFLICT = new Set(['40001', '57P04']);

/** How a replica's error is handled: run the statement on the primary (and count the replica down?) or fail. */
export function replicaFailure(err: unknown): 'down' | 'retry' | 'fail' {
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (isDatabaseUnavailable({ code, message: typeof e.message === 'string' ? e.message : '' }) || DOWN.test(code)) return 'down';
  if (RECOVERY_CONFLICT.has(code)) return 'retry';
  // No SQLSTATE at all: the connection or the driver failed, not the statement.
  return /^[0-9A-Z]{5}$/.test(code) ? 'fail' : 'down';
}

/** One connection of the primary, held until released (a statement or a transaction moved off the replica). */
interface Borrowed {
  db: Db;
  release(): void;
}

function borrow(primary: Db): Promise<Borrowed> {
  return new Promise((resolve, reject) => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    primary
      .connection()
      .execute(async (db) => {
        resolve({ db, release });
        await held;
      })
      .catch(reject);
  });
}

class ReadConnection implements DatabaseConnection {
  inTransaction = false;
  private primaryConn: Borrowed | undefined;

  constructor(
    readonly replica: DatabaseConnection | undefined,
    private readonly primary: Db,
    private readonly state: ReplicaState,
  ) {}

  async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    if (this.replica && !this.primaryConn) {
      try {
        return await this.replica.executeQuery<R>(q);
      } catch (err) {
        const failure = replicaFailure(err);
        if (this.inTransaction || failure === 'fail') throw err;
        if (failure === 'down') this.state.unreachable();
      }
    }
    this.primaryConn ??= await borrow(this.primary);
    return (await this.primaryConn.db.executeQuery(q)) as QueryResult<R>;
  }

  streamQuery<R>(q: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    if (!this.replica || this.primaryConn) throw new Error('the reads handle streams only from the replica; stream from the primary handle');
    return this.replica.streamQuery<R>(q, chunkSize);
  }

  release(): void {
    this.primaryConn?.release();
    this.primaryConn = undefined;
  }
}

class ReadDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly primary: Db,
    private readonly state: ReplicaState,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (!this.state.usable()) return new ReadConnection(undefined, this.primary, this.state);
    try {
      return new ReadConnection(await this.inner.acquireConnection(), this.primary, this.state);
    } catch (err) {
      if (replicaFailure(err) === 'fail') throw err;
      this.state.unreachable();
      return new ReadConnection(undefined, this.primary, this.state);
    }
  }

  // Transactions run through the connection's executeQuery (begin/commit/rollback): on the replica
  // when the connection has one, else on one borrowed primary connection. Once begun on the replica,
  // a failure fails the transaction (its earlier statements cannot move).
  async beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await this.inner.beginTransaction(c, settings);
    (c as ReadConnection).inTransaction = true;
  }

  async commitTransaction(c: DatabaseConnection): Promise<void> {
    (c as ReadConnection).inTransaction = false;
    await this.inner.commitTransaction(c);
  }

  async rollbackTransaction(c: DatabaseConnection): Promise<void> {
    (c as ReadConnection).inTransaction = false;
    await this.inner.rollbackTransaction(c);
  }

  async savepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.savepoint?.(c, name, compile);
  }

  async rollbackToSavepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.rollbackToSavepoint?.(c, name, compile);
  }

  async releaseSavepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.releaseSavepoint?.(c, name, compile);
  }

  async releaseConnection(c: DatabaseConnection): Promise<void> {
    const rc = c as ReadConnection;
    rc.release();
    if (rc.replica) await this.inner.releaseConnection(rc.replica);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/**
 * Wraps the replica's dialect (`openDatabase`'s `wrapDialect`) so that its statements run on
 * `primary` whenever `state` says the replica is unusable or the replica fails them (module comment).
 */
export function readsDialect(primary: Db, state: ReplicaState): (dialect: Dialect) => Dialect {
  return (dialect) => ({
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new ReadDriver(dialect.createDriver(), primary, state),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  });
}
