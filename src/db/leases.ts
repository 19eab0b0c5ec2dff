/**
 * Leases for background passes that must not run twice at once across processes: the availability
 * summary refresh of an environment and table maintenance (docs/architecture.md, "Background jobs").
 * A lease is a row of `job_leases` (migration 0029) naming its holder and when it expires, taken with
 * one atomic statement and renewed by its holder as the pass goes on; the pass takes a pooled
 * connection only for each of its statements, and a lease belongs to the schema its table is in.
 *
 * Compared with the session-level advisory lock it replaces, a process that dies while holding a
 * lease blocks the pass for at most the lease's time (the lock went with the session at once); on
 * the embedded engine, which admits one process, a lease found held at start is a dead process's
 * and is taken over (`soleProcess`). Times are the database server's (`clock_timestamp()`), one
 * clock for every process.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from './database.js';

/** A lease held by a pass. */
export interface Lease {
  readonly name: string;
  readonly holder: string;
  /**
   * True while the lease is still this holder's: renews it once a third of its time has passed since
   * it was taken or last renewed (one UPDATE), otherwise answers without a statement. False once
   * another holder has taken it (it expired): the pass should end.
   */
  keep(): Promise<boolean>;
}

export interface LeaseOptions {
  /** How long the lease holds without a renewal. */
  ttlMs: number;
  /** The database admits this process alone (the embedded engine): a lease held by another holder is a dead process's, taken over. */
  soleProcess?: boolean;
}

/**
 * Takes the lease `name` for `holder` when it is free, expired or already this holder's; true when
 * taken. One statement: of several processes asking at once, one gets it.
 */
export async function takeLease(db: Db, name: string, holder: string, opts: LeaseOptions): Promise<boolean> {
  const { rows } = await sql<{ holder: string }>`
    INSERT INTO job_leases AS l (name, holder, expires_at)
    VALUES (${name}, ${holder}, clock_timestamp() + ${opts.ttlMs}::int * interval '1 millisecond')
    ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
      WHERE ${opts.soleProcess === true} OR l.expires_at < clock_timestamp() OR l.holder = EXCLUDED.holder
    RETURNING l.holder`.execute(db);
  return rows.length === 1;
}

/** Extends `holder`'s lease `name` by `ttlMs` from now; false when the lease is no longer its. */
export async function renewLease(db: Db, name: string, holder: string, ttlMs: number): Promise<boolean> {
  const { rows } = await sql<{ name: string }>`
    UPDATE job_leases SET expires_at = clock_timestamp() + ${ttlMs}::int * interval '1 millisecond'
    WHERE name = ${name} AND holder = ${holder}
    RETURNING name`.execute(db);
  return rows.length === 1;
}

/** Gives up `holder`'s lease `name` (nothing when it is no longer its). */
export async function releaseLease(db: Db, name: string, holder: string): Promise<void> {
  await sql`DELETE FROM job_leases WHERE name = ${name} AND holder = ${holder}`.execute(db);
}

/**
 * Runs `work` holding the lease `name`, released afterwards whatever happened; resolves `undefined`
 * without running it when another holder has the lease. `work` calls `lease.keep()` between its
 * steps and ends when it answers false.
 */
export async function withLease<T>(db: Db, name: string, opts: LeaseOptions, work: (lease: Lease) => Promise<T>): Promise<T | undefined> {
  const holder = randomUUID();
  if (!(await takeLease(db, name, holder, opts))) return undefined;
  let renewedAt = Date.now();
  const lease: Lease = {
    name,
    holder,
    async keep() {
      if (Date.now() - renewedAt < opts.ttlMs / 3) return true;
      const kept = await renewLease(db, name, holder, opts.ttlMs);
      if (kept) renewedAt = Date.now();
      return kept;
    },
  };
  try {
    return await work(lease);
  } finally {
    await releaseLease(db, name, holder);
  }
}
