/**
 * The replica lag check (docs/decisions/0020-read-replicas.md, "Measuring the lag"): each pass samples
 * the primary's flushed WAL position and then the replica's replayed position (`ReplicaHandle.check`),
 * four times per `DATABASE_REPLICA_MAX_LAG_MS` and at least once a second. It is not one of the
 * shared background jobs of src/jobs/registry.ts: every API process that reads from a replica runs its
 * own (its routes ask its own `ReplicaState`), `serve --no-workers` included, and `carebook worker`
 * processes, which read nothing for callers, run none. A failed pass (the primary unreachable) is
 * logged like any job's; the replica then ages past its bound by itself.
 */
import type { ReplicaHandle } from '../db/replica.js';
import type { Job } from './loop.js';

/** Pause between two checks for a bound of `maxLagMs`: a quarter of it, from 50 ms to 1 s. */
export function replicaCheckIntervalMs(maxLagMs: number): number {
  return Math.min(1_000, Math.max(50, Math.floor(maxLagMs / 4)));
}

/** The lag check of `replica` as a loop's job (started with `startLoop`, src/jobs/loop.ts). */
export function replicaLagJob(replica: ReplicaHandle): Job {
  return {
    name: 'replica-lag',
    title: 'replica lag check',
    intervalMs: replicaCheckIntervalMs(replica.state.maxLagMs),
    async pass() {
      await replica.check();
      return 1;
    },
  };
}
