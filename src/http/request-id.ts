import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE = /^[A-Za-z0-9._:-]{1,128}$/;
const ID_BYTES = 12;
/** Request ids drawn per refill of the random pool (one `randomFillSync` per this many requests). */
const POOL_IDS = 512;

/**
 * Makes the request-id function of one application: the caller's `x-request-id` when it is a
 * short, safe token (so traces join across services), else a new random one, `req_` and 24 hex
 * digits (96 random bits). It is echoed in the `x-request-id` header and in every body.
 *
 * Random bytes are drawn from the CSPRNG in blocks of `POOL_IDS` ids: one system call per block
 * instead of one per request (it was ~1 % of a `GET /v1/appointments/{id}`).
 */
export function requestIdGenerator(): (req: IncomingMessage) => string {
  const pool = Buffer.alloc(ID_BYTES * POOL_IDS);
  let next = POOL_IDS;
  return (req) => {
    if (next === POOL_IDS) {
      randomFillSync(pool);
      next = 0;
    }
    const start = ID_BYTES * next++;
    const own = `req_${pool.toString('hex', start, start + ID_BYTES)}`;
    (req as IncomingMessage & { [SERVICE_ID]?: string })[SERVICE_ID] = own;
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && SAFE.test(given) ? given : own;
  };
}

const SERVICE_ID = Symbol('carebook.serviceRequestId');

/**
 * The service's own id of a request, whatever the caller sent as `x-request-id`: what the audit
 * log records, so that a caller cannot put its own (or another request's) id on an audit entry.
 * The caller's safe id is still echoed in the `x-request-id` header and the bodies.
 */
export function serviceRequestId(req: { raw: IncomingMessage; id: string }): string {
  return (req.raw as IncomingMessage & { [SERVICE_ID]?: string })[SERVICE_ID] ?? String(req.id);
}
