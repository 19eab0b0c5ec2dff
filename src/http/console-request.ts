/**
 * The Console API's request decoration (docs/decisions/0015-developer-console.md): the console
 * guard sets `req.consoleUser` before any `/console/v1` handler runs.
 */
import type { FastifyRequest } from 'fastify';
import type { ConsoleUser } from '../domain/console/accounts.js';
import { authenticationRequired } from '../domain/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the console guard on `/console/v1` routes. */
    consoleUser?: ConsoleUser;
  }
}

/** The caller of a `/console/v1` route; the guard has run, so a missing one is a wiring fault answered 401. */
export function consoleUserOf(req: FastifyRequest): ConsoleUser {
  if (!req.consoleUser) throw authenticationRequired('sign in to the developer console');
  return req.consoleUser;
}
