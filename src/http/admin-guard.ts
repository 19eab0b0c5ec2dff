/**
 * Guard of the operator's admin API (contracts.md §2): `Authorization: Bearer ${ADMIN_TOKEN}`,
 * compared in constant time. The admin API is not registered at all when ADMIN_TOKEN is unset.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { bearerToken } from './auth-guard.js';
import { unauthorized } from './errors.js';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export function makeAdminGuard(adminToken: string) {
  const expected = digest(adminToken);
  return async (req: FastifyRequest): Promise<void> => {
    const token = bearerToken(req);
    if (!token || !timingSafeEqual(digest(token), expected)) throw unauthorized('invalid admin token');
  };
}
