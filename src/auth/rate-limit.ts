/**
 * Fixed-window counters in the database for the sign-in page: failed sign-ins are throttled per
 * account and per address, sign-ups per address (OWASP Authentication Cheat Sheet; NIST SP 800-63B
 * §5.2.2). Kept in the database so that every process on one database shares them.
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

/** Seconds until the bucket accepts hits again, or 0 when it is under its limit. */
export async function retryAfter(db: Db, bucket: string, limit: Limit): Promise<number> {
  const row = await db.selectFrom('auth_rate_limits').select(['hits', 'window_ends_at']).where('bucket', '=', bucket).executeTakeFirst();
  if (!row || row.window_ends_at.getTime() <= Date.now() || row.hits < limit.max) return 0;
  return Math.max(1, Math.ceil((row.window_ends_at.getTime() - Date.now()) / 1000));
}

/** Counts one hit (atomically; a window that has ended starts over). */
export async function hit(db: Db, bucket: string, limit: Limit): Promise<void> {
  const ends = new Date(Date.now() + limit.windowMs);
  await sql`
    INSERT INTO auth_rate_limits (bucket, hits, window_ends_at) VALUES (${bucket}, 1, ${ends})
    ON CONFLICT (bucket) DO UPDATE SET
      hits = CASE WHEN auth_rate_limits.window_ends_at <= now() THEN 1 ELSE auth_rate_limits.hits + 1 END,
      window_ends_at = CASE WHEN auth_rate_limits.window_ends_at <= now() THEN excluded.window_ends_at ELSE auth_rate_limits.window_ends_at END
  `.execute(db);
}

/** Forgets a bucket (a successful sign-in clears the account's failures). */
export async function clear(db: Db, bucket: string): Promise<void> {
  await db.deleteFrom('auth_rate_limits').where('bucket', '=', bucket).execute();
}
