/**
 * The Practice API's request decoration (docs/decisions/0014-practice-workspace.md): the practice
 * guard sets `req.staff` before any `/practice/v1` handler runs.
 */
import type { FastifyRequest } from 'fastify';
import { authenticationRequired } from '../domain/errors.js';
import type { StaffPrincipal } from '../domain/practices/staff-principal.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the practice guard on `/practice/v1` routes. */
    staff?: StaffPrincipal;
  }
}

/** The caller of a `/practice/v1` route; the guard has run, so a missing one is a wiring fault answered 401. */
export function staffOf(req: FastifyRequest): StaffPrincipal {
  if (!req.staff) throw authenticationRequired('sign in to the practice workspace');
  return req.staff;
}
