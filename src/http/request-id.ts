import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request id: the caller's `x-request-id` when it is a short, safe token (so traces join across
 * services), else a new random one. It is echoed in the `x-request-id` header and in every body.
 */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && SAFE.test(given)) return given;
  return `req_${randomBytes(12).toString('hex')}`;
}
