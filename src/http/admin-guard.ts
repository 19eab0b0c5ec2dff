/**
 * Guard of the operator's admin API (docs/api/admin.md#access): `Authorization: Bearer ${ADMIN_TOKEN}`,
 * compared in constant time. The admin API is not registered at all when ADMIN_TOKEN is unset.
 *
 * Guessing is throttled per client address, in the database that all processes share. The token is
 * compared first (in memory, no I/O); a wrong one is counted in one atomic statement before it is
 * answered, and answered 429 past `ADMIN_FAILURES.max` per window; a right one is let through only
 * while that window is not used up. So at most `ADMIN_FAILURES.max` guesses per window are checked
 * from one address however many arrive at once, and an operator's script may send as many right
 * calls at once as it likes (docs/operator-guide.md, "The admin API").
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { exhausted, take, type Limit } from '../auth/rate-limit.js';
import type { Db } from '../db/database.js';
import { bearerToken } from './auth-guard.js';
import { rateLimited, unauthorized } from '../domain/errors.js';

/** Wrong admin tokens allowed per address and window. */
export const ADMIN_FAILURES: Limit = { max: 10, windowMs: 15 * 60 * 1000 };

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export function makeAdminGuard(adminToken: string, db: Db, limit: Limit = ADMIN_FAILURES) {
  const expected = digest(adminToken);
  return async (req: FastifyRequest): Promise<void> => {
    const bucket = `admin:addr:${req.ip}`;
    const token = bearerToken(req);
    const right = token !== undefined && timingSafeEqual(digest(token), expected);
    const wait = right ? await exhausted(db, bucket, limit) : await take(db, bucket, limit);
    if (wait > 0) {
      throw rateLimited(`too many failed admin authentications; retry after ${wait} s`, wait);
    }
    if (!right) throw unauthorized('invalid admin token');
  };
}
