/**
 * Counts and times what a Kysely instance sends to its database, for benchmarks (bench/evaluator.ts):
 * wrap the dialect (`openDatabase({ wrapDialect: meter.wrap })`) and read `meter.snapshot()`.
 *
 * - statements: every statement a connection executes (savepoints included), plus one BEGIN and one
 *   COMMIT (or ROLLBACK) per transaction, which the driver sends itself;
 * - transactions: the time from the moment BEGIN has completed to the moment COMMIT (or ROLLBACK)
 *   has completed. On PGlite (src/db/pglite-dialect.ts) that is the time the transaction holds the
 *   engine's one lock (a BEGIN completes once the lock is taken; the lock is let go when the commit
 *   has completed), less the BEGIN statement itself; on PostgreSQL it is the time the transaction's
 *   row locks are held, less one round trip.
 */
import type { DatabaseConnection, Dialect, Driver, QueryCompiler, TransactionSettings } from 'kysely';

export interface MeterSnapshot {
  statements: number;
  transactions: number;
  /** Milliseconds each transaction lasted (BEGIN done → COMMIT/ROLLBACK done), in the order they ended. */
  transactionMs: number[];
  /**
   * CPU milliseconds this process spent meanwhile (user + system, `process.cpuUsage`): on PGlite the
   * engine's work and ours; well under `transactionMs` when the process waited for a CPU.
   */
  transactionCpuMs: number[];
}

export class StatementMeter {
  #statements = 0;
  #transactionMs: number[] = [];
  #transactionCpuMs: number[] = [];
  readonly #open = new WeakMap<DatabaseConnection, { t0: number; cpu0: NodeJS.CpuUsage }>();

  /** Resets the counters. */
  reset(): void {
    this.#statements = 0;
    this.#transactionMs = [];
    this.#transactionCpuMs = [];
  }

  snapshot(): MeterSnapshot {
    return { statements: this.#statements, transactions: this.#transactionMs.length, transactionMs: [...this.#transactionMs], transactionCpuMs: [...this.#transactionCpuMs] };
  }

  /** The dialect, metered (pass as `openDatabase`'s `wrapDialect`). */
  readonly wrap = (dialect: Dialect): Dialect => ({
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver: () => this.#driver(dialect.createDriver()),
  });

  #driver(inner: Driver): Driver {
    const inners = new WeakMap<DatabaseConnection, DatabaseConnection>();
    const unwrap = (c: DatabaseConnection) => inners.get(c) ?? c;
    const count = () => {
      this.#statements += 1;
    };
    const began = (c: DatabaseConnection) => {
      count();
      this.#open.set(c, { t0: performance.now(), cpu0: process.cpuUsage() });
    };
    const ended = (c: DatabaseConnection) => {
      count();
      const open = this.#open.get(c);
      if (open) {
        this.#transactionMs.push(performance.now() - open.t0);
        const cpu = process.cpuUsage(open.cpu0);
        this.#transactionCpuMs.push((cpu.user + cpu.system) / 1000);
      }
      this.#open.delete(c);
    };
    const savepointOp =
      (op: 'savepoint' | 'rollbackToSavepoint' | 'releaseSavepoint') =>
      async (c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> => {
        count();
        await inner[op]!(unwrap(c), name, compile);
      };
    return {
      init: () => inner.init(),
      acquireConnection: async () => {
        const c = await inner.acquireConnection();
        const wrapped: DatabaseConnection = {
          executeQuery: (q) => {
            count();
            return c.executeQuery(q);
          },
          streamQuery: (q, chunk) => c.streamQuery(q, chunk),
        };
        inners.set(wrapped, c);
        return wrapped;
      },
      beginTransaction: async (c: DatabaseConnection, s: TransactionSettings) => {
        await inner.beginTransaction(unwrap(c), s);
        began(c);
      },
      commitTransaction: async (c) => {
        await inner.commitTransaction(unwrap(c));
        ended(c);
      },
      rollbackTransaction: async (c) => {
        await inner.rollbackTransaction(unwrap(c));
        ended(c);
      },
      ...(inner.savepoint ? { savepoint: savepointOp('savepoint') } : {}),
      ...(inner.rollbackToSavepoint ? { rollbackToSavepoint: savepointOp('rollbackToSavepoint') } : {}),
      ...(inner.releaseSavepoint ? { releaseSavepoint: savepointOp('releaseSavepoint') } : {}),
      releaseConnection: (c) => inner.releaseConnection(unwrap(c)),
      destroy: () => inner.destroy(),
    };
  }
}
