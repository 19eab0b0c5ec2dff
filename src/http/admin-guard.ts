/**
 * Guard of the operator's admin API (docs/api/admin.md#access): `Authorization: Bearer ${ADMIN_TOKEN}`,
 * compared in constant time. The admin API is not registered at all when ADMIN_TOKEN is unset.
 *
 * Guessing is throttled per client address: every attempt is counted first, in the database that
 * all processes share, and a success gives its attempt back, so at most `ADMIN_FAILURES.max` wrong
 * tokens per window are checked from one address however many arrive at once
 * (docs/operator-guide.md, "The admin API").
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { refund, take, type Limit } from '../auth/rate-limit.js';
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
    const wait = await take(db, bucket, limit);
    if (wait > 0) {
      throw rateLimited(`too many failed admin authentications; retry after ${wait} s`, wait);
    }
    const token = bearerToken(req);
    if (!token || !timingSafeEqual(digest(token), expected)) throw unauthorized('invalid admin token');
    await refund(db, bucket);
  };
}
