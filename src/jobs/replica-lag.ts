/**
 * The replica lag check (docs/decisions/0020-read-replicas.md, "Measuring the lag"): each pass samples
 * the primary's flushed WAL position and then the replica's replayed position (`ReplicaHandle.check`),
 * four times per `DATABASE_REPLICA_MAX_LAG_MS` and at least once a second. It is not one of the
 * shared background jobs of src/jobs/registry.ts: every API process that reads from a replica runs its
 * own (its routes ask its own `ReplicaState`), `serve --no-workers` included, and `carebook worker`
 * processes, which read nothing for callers, run none. A failed pass (the primary unreachable) is
 * logged like any job's; the replica then ages past its bound by itself.
 */
import type { Logger } from 'pino';
import type { ReplicaHandle } from '../db/replica.js';
import type { ReplicaCondition } from '../db/replica-state.js';
import type { Job } from './loop.js';

/** Pause between two checks for a bound of `maxLagMs`: a quarter of it, from 50 ms to 1 s. */
export function replicaCheckIntervalMs(maxLagMs: number): number {
  return Math.min(1_000, Math.max(50, Math.floor(maxLagMs / 4)));
}

/**
 * The lag check of `replica` as a loop's job (started with `startLoop`, src/jobs/loop.ts). Each change
 * of the replica's condition after a check is logged (`replica_state`): a warning when reads leave
 * the replica (lagging, unreachable, not a standby), info when they come back.
 */
export function replicaLagJob(replica: ReplicaHandle, logger: Pick<Logger, 'warn' | 'info'>): Job {
  let last: ReplicaCondition = 'starting';
  return {
    name: 'replica-lag',
    title: 'replica lag check',
    intervalMs: replicaCheckIntervalMs(replica.state.maxLagMs),
    async pass() {
      await replica.check();
      const { condition, lagMs } = replica.state.report();
      if (condition !== last && condition !== 'starting') {
        const line = { event: 'replica_state', replica: condition, ...(lagMs !== undefined ? { lag_ms: Math.round(lagMs) } : {}) };
        if (condition === 'ok') logger.info(line, 'read replica in use');
        else logger.warn(line, 'read replica not in use: reads go to the primary');
        last = condition;
      }
      return 1;
    },
  };
}
