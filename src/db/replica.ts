/**
 * The read replica of a PostgreSQL deployment (`DATABASE_REPLICA_URL`; docs/operator-guide.md, "Read
 * replicas"; docs/decisions/0020-read-replicas.md): its own pool, the state that says whether it may
 * serve reads, the check that feeds that state, and `reads`, the handle routes pass for directory and
 * availability reads (the replica when usable, else the primary, statement by statement).
 */
import { sql } from 'kysely';
import { openDatabase, type Db, type DatabaseHandle } from './database.js';
import { readsDialect } from './replica-reads.js';
import { lsnValue, ReplicaState, type ReplicaReading } from './replica-state.js';

export { ReplicaState } from './replica-state.js';

/** `application_name` of the replica's connections (`pg_stat_activity` on the standby). */
export const REPLICA_APPLICATION_NAME = 'carebook-reads';

/** The replica of one process. */
export interface ReplicaHandle {
  /** For directory and availability reads: the replica while usable, else the primary. Never for a write. */
  reads: Db;
  state: ReplicaState;
  /** One lag check: samples the primary, then reads the replica (`checkReplica`). */
  check(): Promise<void>;
  close(): Promise<void>;
}

export interface ReplicaOptions {
  url: string;
  maxLagMs: number;
  poolSize?: number;
  preparedStatements?: boolean;
  /** PostgreSQL schema first on the search_path (tests isolate themselves this way). */
  schema?: string;
  /** Server options for the replica's sessions (tests mark a stand-in replica read-only this way). */
  options?: string;
}

/** How long opening a replica connection may take before the read goes to the primary. */
const CONNECT_TIMEOUT_MS = 1_000;

/**
 * Opens the replica's pool beside `primary` (`DATABASE_REPLICA_URL`). Nothing is read from it until a
 * lag check (`check`, run by src/jobs/replica-lag.ts) has found it caught up.
 */
export async function openReplica(primary: DatabaseHandle, opts: ReplicaOptions): Promise<ReplicaHandle> {
  const state = new ReplicaState(opts.maxLagMs);
  const url = new URL(opts.url);
  if (opts.options) url.searchParams.set('options', [url.searchParams.get('options'), opts.options].filter(Boolean).join(' '));
  const common = {
    databaseUrl: url.toString(),
    preparedStatements: opts.preparedStatements ?? true,
    applicationName: REPLICA_APPLICATION_NAME,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    ...(opts.schema ? { schema: opts.schema } : {}),
  };
  const replica = await openDatabase({ ...common, poolSize: opts.poolSize ?? 10, wrapDialect: readsDialect(primary.db, state) });
  // The lag check asks the replica itself, on a connection of its own: through `reads` it would be
  // answered by the primary whenever the replica is unusable.
  const probe = await openDatabase({ ...common, poolSize: 1 });
  return {
    reads: replica.db,
    state,
    check: () => checkReplica(primary.db, probe.db, state),
    async close() {
      await Promise.all([replica.close(), probe.close()]);
    },
  };
}

/**
 * One lag check (docs/decisions/0020-read-replicas.md, "Measuring the lag"): the primary's flushed WAL
 * position first, then the replica's replayed position. A replica that cannot be asked is marked
 * unreachable; when the primary cannot be asked nothing is learnt (the error is thrown), and the
 * replica ages past its bound by itself. A replica URL that reaches the primary's own server (same
 * start time and database) is caught up by construction; any other server not in recovery (e.g. a
 * promoted former standby, whose data has parted from the primary's) is never read.
 */
export async function checkReplica(primary: Db, replica: Db, state: ReplicaState): Promise<void> {
  const at = Date.now();
  const p = await sql<{ lsn: string; started: string; database: string }>`
    SELECT pg_current_wal_flush_lsn()::text AS lsn, pg_postmaster_start_time()::text AS started, current_database() AS database`.execute(primary);
  const primaryRow = p.rows[0]!;
  state.primarySample(lsnValue(primaryRow.lsn), at);
  let reading: ReplicaReading;
  try {
    const r = await sql<{ standby: boolean; replay: string | null; started: string; database: string }>`
      SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replay,
             pg_postmaster_start_time()::text AS started, current_database() AS database`.execute(replica);
    const row = r.rows[0]!;
    if (row.standby) reading = { kind: 'standby', replayLsn: row.replay ? lsnValue(row.replay) : undefined };
    else reading = row.started === primaryRow.started && row.database === primaryRow.database ? { kind: 'same server' } : { kind: 'not a standby' };
  } catch {
    state.unreachable();
    return;
  }
  state.replicaReading(reading);
}
