/**
 * Whether the read replica may serve reads now (docs/decisions/0020-read-replicas.md): it may while
 * it is reachable and holds everything the primary had flushed at most `maxLagMs` ago.
 *
 * The lag is measured by WAL position, not by replay timestamps: each check samples the primary's
 * flushed WAL position (`pg_current_wal_flush_lsn()`) and then the replica's replayed position
 * (`pg_last_wal_replay_lsn()`). Once the replica has replayed past a sample's position it holds every
 * transaction the primary had committed when that sample was taken, so the replica is at most
 * `now − (time of the latest such sample)` behind. An idle primary writes no new WAL, so its samples
 * are caught up at once and the lag stays near zero, where `now() − pg_last_xact_replay_timestamp()`
 * would grow without bound. The lag is computed when a request asks, so a check that stops coming
 * (hung, or the primary unreachable) makes the replica unusable after `maxLagMs` by itself.
 */

/** What `/readyz` says of the replica. */
export type ReplicaCondition = 'starting' | 'ok' | 'lagging' | 'unreachable' | 'not a standby';

/** A WAL position (`pg_lsn` text, `X/Y` in hex) as a number that orders like the position. */
export function lsnValue(text: string): bigint {
  const [hi, lo] = text.split('/');
  if (hi === undefined || lo === undefined) throw new Error(`not a WAL position: ${text}`);
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

/** One check's reading of the replica. */
export type ReplicaReading =
  /** A hot standby that has replayed WAL up to `replayLsn` (undefined: nothing replayed yet). */
  | { kind: 'standby'; replayLsn: bigint | undefined }
  /** The replica URL reaches the primary's own server (no lag by construction). */
  | { kind: 'same server' }
  /** A server that is neither in recovery nor the primary (e.g. a promoted former standby): never read. */
  | { kind: 'not a standby' };

/** Samples kept while the replica has not replayed them (a paused replica would otherwise grow the list). */
const MAX_PENDING = 2_000;

/** The replica's state in one process: fed by the lag check and by failed reads, asked by every read. */
export class ReplicaState {
  /** Primary positions sampled and not yet replayed, oldest first. */
  private pending: { lsn: bigint; at: number }[] = [];
  /** When the primary was last sampled at a position the replica has since replayed. */
  private caughtUpAt: number | undefined;
  private condition: 'starting' | 'reachable' | 'unreachable' | 'not a standby' = 'starting';

  constructor(
    readonly maxLagMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The lag check sampled the primary's flushed WAL position at `at` (before asking the replica). */
  primarySample(lsn: bigint, at: number): void {
    this.pending.push({ lsn, at });
    if (this.pending.length > MAX_PENDING) this.pending.shift();
  }

  /** The lag check read the replica after the last primary sample. */
  replicaReading(r: ReplicaReading): void {
    if (r.kind === 'not a standby') {
      this.condition = 'not a standby';
      this.caughtUpAt = undefined;
      return;
    }
    this.condition = 'reachable';
    const replayed = r.kind === 'same server' ? undefined : r.replayLsn;
    while (this.pending.length) {
      const first = this.pending[0]!;
      if (r.kind === 'standby' && (replayed === undefined || first.lsn > replayed)) break;
      this.caughtUpAt = Math.max(this.caughtUpAt ?? 0, first.at);
      this.pending.shift();
    }
  }

  /** The replica could not be reached (by the check, or by a read that then went to the primary). */
  unreachable(): void {
    this.condition = 'unreachable';
    this.caughtUpAt = undefined;
  }

  /** How far behind the replica is, in ms (undefined: unknown, not reachable, or not a standby). */
  lagMs(): number | undefined {
    if (this.condition !== 'reachable' || this.caughtUpAt === undefined) return undefined;
    return Math.max(0, this.now() - this.caughtUpAt);
  }

  /** Whether reads may go to the replica now. */
  usable(): boolean {
    const lag = this.lagMs();
    return lag !== undefined && lag <= this.maxLagMs;
  }

  /** The replica's condition for `/readyz` and `/metrics`. */
  report(): { condition: ReplicaCondition; lagMs: number | undefined } {
    const lagMs = this.lagMs();
    if (this.condition === 'reachable') {
      if (lagMs !== undefined) return { condition: lagMs <= this.maxLagMs ? 'ok' : 'lagging', lagMs };
      // Reachable, but nothing sampled has been replayed yet: lagging once the oldest sample is past the bound.
      const oldest = this.pending[0];
      return { condition: oldest && this.now() - oldest.at > this.maxLagMs ? 'lagging' : 'starting', lagMs };
    }
    return { condition: this.condition, lagMs };
  }
}
