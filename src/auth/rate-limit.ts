/**
 * Fixed-window counters in the database for the sign-in page: sign-in attempts are throttled per
 * account and per address, sign-ups per address (OWASP Authentication Cheat Sheet; NIST SP 800-63B
 * §5.2.2). Kept in the database so that every process on one database shares them; every attempt
 * is counted before it is checked ({@link take}).
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';

export interface Limit {
  /** Most hits allowed in one window. */
  max: number;
  windowMs: number;
}

/** Login throttling: failed sign-ins per account and per address, sign-ups per address. */
export interface LoginLimits {
  failuresPerAccount: Limit;
  failuresPerAddress: Limit;
  signupsPerAddress: Limit;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = {
  failuresPerAccount: { max: 10, windowMs: 15 * 60 * 1000 },
  failuresPerAddress: { max: 100, windowMs: 15 * 60 * 1000 },
  signupsPerAddress: { max: 30, windowMs: 60 * 60 * 1000 },
};

/**
 * Counts one attempt in `bucket` first, in one atomic statement (a window that has ended starts
 * over), and answers whether the attempt may go on: 0 when the count is within `limit`, otherwise
 * the seconds until the window ends. Counting before the attempt is checked is what makes the limit
 * hold when many attempts arrive at once, in one process or many: each one's count is decided by
 * the row it updated, never by a read taken before another attempt's write (OWASP Authentication
 * Cheat Sheet, "Login throttling"; docs/auth.md, "Throttles").
 */
export async function take(db: Db, bucket: string, limit: Limit): Promise<number> {
  const ends = new Date(Date.now() + limit.windowMs);
  const { rows } = await sql<{ hits: number; window_ends_at: Date }>`
    INSERT INTO auth_rate_limits (bucket, hits, window_ends_at) VALUES (${bucket}, 1, ${ends})
    ON CONFLICT (bucket) DO UPDATE SET
      hits = CASE WHEN auth_rate_limits.window_ends_at <= now() THEN 1 ELSE auth_rate_limits.hits + 1 END,
      window_ends_at = CASE WHEN auth_rate_limits.window_ends_at <= now() THEN excluded.window_ends_at ELSE auth_rate_limits.window_ends_at END
    RETURNING hits, window_ends_at
  `.execute(db);
  const row = rows[0]!;
  if (row.hits <= limit.max) return 0;
  return Math.max(1, Math.ceil((new Date(row.window_ends_at).getTime() - Date.now()) / 1000));
}

/**
 * Reads `bucket` without counting: 0 while fewer than `limit.max` hits are counted in the current
 * window, otherwise the seconds until the window ends. For a caller whose attempt already proved
 * right (the admin guard's correct token): it is refused only when the wrong attempts counted
 * before it, in the database's order, used up the window, so no more than `limit.max` guesses are
 * ever checked, and a burst of right attempts is never refused for being many.
 */
export async function exhausted(db: Db, bucket: string, limit: Limit): Promise<number> {
  const row = await db
    .selectFrom('auth_rate_limits')
    .select(['hits', 'window_ends_at'])
    .where('bucket', '=', bucket)
    .where('window_ends_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  if (!row || row.hits < limit.max) return 0;
  return Math.max(1, Math.ceil((new Date(row.window_ends_at).getTime() - Date.now()) / 1000));
}

/** Gives back one attempt counted by {@link take} (a sign-in that succeeded is not held against its address). */
export async function refund(db: Db, bucket: string): Promise<void> {
  await sql`UPDATE auth_rate_limits SET hits = GREATEST(hits - 1, 0) WHERE bucket = ${bucket}`.execute(db);
}

/** Forgets a bucket (a successful sign-in clears the account's count). */
export async function clear(db: Db, bucket: string): Promise<void> {
  await db.deleteFrom('auth_rate_limits').where('bucket', '=', bucket).execute();
}
