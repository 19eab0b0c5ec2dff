/**
 * `Idempotency-Key` on every POST of `/v1` (docs/api/conventions.md#idempotency): a repeat with the same key and the same
 * request within 24 hours answers the first answer again (header `idempotent-replayed: true`); the
 * same key with another request is 409; a repeat while the first is still running is 409.
 *
 * Keys are stored per developer in `idempotency_keys`, in one key space per credential (OAuth client),
 * user and anonymous end user. Answers that carry a secret or a token (routes with
 * `config.idempotency = 'withhold'`) are never kept: only their status is. 5xx answers are not kept
 * (the client may retry with the same key); every other answer is. A request abandoned mid-flight
 * (process crash) frees its key after `STALE_AFTER_MS`.
 *
 * `installIdempotency(app, db)` adds an `onRoute` hook, so every POST route registered after it
 * whose guard sets a principal gets the behaviour without doing anything.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler } from 'fastify';
import { sql } from 'kysely';
import { DateTime } from 'luxon';
import type { Db } from '../db/database.js';
import type { Principal } from '../domain/credentials/principal.js';
import { invalidInput, conflict } from '../domain/errors.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const TTL_HOURS = 24;
const STALE_AFTER_MS = 60_000;

interface Claim {
  developerId: string;
  principal: string;
  key: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyClaim?: Claim;
  }
  interface FastifyContextConfig {
    /**
     * `withhold`: the route's answer carries a secret or a token. It is never stored: a repeat of a
     * completed request with the same key is refused (409), never answered with the first answer.
     */
    idempotency?: 'withhold';
  }
}

/**
 * The key space of a principal within its developer: each credential (OAuth client), user and
 * anonymous end user has its own, so a repeat sent with another credential never receives the
 * first one's answer (docs/decisions/0010-idempotency-never-keeps-secrets.md).
 */
function keySpace(p: Principal): string {
  return p.kind === 'user' ? `user:${p.userId}` : p.kind === 'anonymous' ? `anonymous:${p.subject}` : `client:${p.clientId}`;
}

/** Whether the route's answers carry a secret or a token (never stored, never replayed). */
function withheld(req: FastifyRequest): boolean {
  return req.routeOptions.config?.idempotency === 'withhold';
}

function requestHash(req: FastifyRequest): string {
  const body = req.body;
  // A body the route reads as a stream (multipart uploads) is not parsed here: its type and length stand in.
  const text =
    body === undefined || body === null
      ? `${req.headers['content-type'] ?? ''};${req.headers['content-length'] ?? ''}`
      : Buffer.isBuffer(body) ? body.toString('base64') : typeof body === 'string' ? body : stableJson(body);
  return createHash('sha256').update(`${req.method} ${req.url.split('?')[0]}\n${text}`).digest('hex');
}

/**
 * JSON with object keys sorted, so the same body in another key order is the same request. Binary
 * content (buffers, buffered multipart files) is represented by its SHA-256; multipart parts by their
 * value or content, not their parser internals (which are circular).
 */
function stableJson(v: unknown): string {
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return JSON.stringify(`sha256:${createHash('sha256').update(v).digest('hex')}`);
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const part = v as { type?: unknown; fieldname?: unknown; value?: unknown; _buf?: unknown };
    if (typeof part.fieldname === 'string' && (part.type === 'file' || part.type === 'field')) {
      // A file part streamed to the attachment store carries its size and SHA-256 as `value`.
      return part.type === 'file' ? stableJson(part._buf ?? part.value ?? null) : stableJson(part.value);
    }
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** The preHandler: claims the key, or replays / refuses. Runs after the route's guard. */
export function idempotencyPreHandler(db: Db): preHandlerHookHandler {
  return async function (req: FastifyRequest, reply: FastifyReply) {
    const raw = req.headers[IDEMPOTENCY_HEADER];
    if (raw === undefined || !req.principal) return;
    const key = Array.isArray(raw) ? raw[0]! : raw;
    if (key.length < 1 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) {
      throw invalidInput('Idempotency-Key', 'must be 1 to 255 visible ASCII characters');
    }
    const p = req.principal;
    const claim: Claim = { developerId: p.developerId, principal: keySpace(p), key };
    const hash = requestHash(req);
    const path = req.url.split('?')[0]!;
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = DateTime.utc();
      const inserted = await db
        .insertInto('idempotency_keys')
        .values({
          env: p.env,
          developer_id: claim.developerId,
          principal: claim.principal,
          key,
          method: req.method,
          path,
          request_hash: hash,
          status_code: null,
          response_body: null,
          expires_at: now.plus({ hours: TTL_HOURS }).toJSDate(),
        })
        .onConflict((oc) => oc.columns(['developer_id', 'principal', 'key']).doNothing())
        .returning('key')
        .executeTakeFirst();
      if (inserted) {
        req.idempotencyClaim = claim;
        return;
      }
      const existing = await db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('developer_id', '=', claim.developerId)
        .where('principal', '=', claim.principal)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!existing) continue;
      const expired = new Date(existing.expires_at).getTime() <= now.toMillis();
      const stale = existing.status_code === null && new Date(existing.created_at).getTime() < now.toMillis() - STALE_AFTER_MS;
      if (expired || stale) {
        await db
          .deleteFrom('idempotency_keys')
          .where('developer_id', '=', claim.developerId)
          .where('principal', '=', claim.principal)
          .where('key', '=', key)
          .where((eb) =>
            eb.or([
              eb('expires_at', '<=', now.toJSDate()),
              eb.and([eb('status_code', 'is', null), eb('created_at', '<', now.minus({ milliseconds: STALE_AFTER_MS }).toJSDate())]),
            ]),
          )
          .execute();
        continue;
      }
      if (existing.request_hash !== hash) {
        throw conflict('Idempotency-Key was already used with a different request', 'Idempotency-Key');
      }
      if (existing.status_code === null) {
        throw conflict('a request with this Idempotency-Key is still in progress', 'Idempotency-Key');
      }
      if (withheld(req)) {
        throw conflict('this request was already made with this Idempotency-Key; its answer carried a secret and is not kept, so it cannot be repeated', 'Idempotency-Key');
      }
      const body = existing.response_body as Record<string, unknown> | null;
      const replay = body && typeof body === 'object' && 'request_id' in body ? { ...body, request_id: String(req.id) } : body;
      reply.header('idempotent-replayed', 'true');
      // Bypass the route's response serializer: the stored body is already the serialized answer.
      return reply.code(existing.status_code).type('application/json; charset=utf-8').serializer((x: unknown) => JSON.stringify(x)).send(replay);
    }
    throw conflict('Idempotency-Key could not be claimed; retry', 'Idempotency-Key');
  };
}

/** The onSend hook: stores the answer of the request that claimed the key (or frees it on 5xx). */
export function idempotencyOnSend(db: Db): onSendHookHandler {
  return async function (req, reply, payload) {
    const claim = req.idempotencyClaim;
    if (!claim) return payload;
    req.idempotencyClaim = undefined;
    const where = db
      .updateTable('idempotency_keys')
      .where('developer_id', '=', claim.developerId)
      .where('principal', '=', claim.principal)
      .where('key', '=', claim.key);
    if (reply.statusCode >= 500) {
      await db
        .deleteFrom('idempotency_keys')
        .where('developer_id', '=', claim.developerId)
        .where('principal', '=', claim.principal)
        .where('key', '=', claim.key)
        .execute();
      return payload;
    }
    let body: unknown = null;
    if (typeof payload === 'string' && !withheld(req)) {
      try {
        body = JSON.parse(payload);
      } catch {
        body = payload;
      }
    }
    await where.set({ status_code: reply.statusCode, response_body: sql`${JSON.stringify(body)}::jsonb` }).execute();
    return payload;
  };
}

/**
 * Gives every POST route registered after this call the Idempotency-Key behaviour: the preHandler is
 * appended after the route's own (its guard), the onSend hook stores the answer.
 */
export function installIdempotency(app: FastifyInstance, db: Db): void {
  const pre = idempotencyPreHandler(db);
  const onSend = idempotencyOnSend(db);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('POST') || !route.url.startsWith('/v1')) return;
    const existingPre = route.preHandler ? (Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]) : [];
    route.preHandler = [...existingPre, pre];
    const existingSend = route.onSend ? (Array.isArray(route.onSend) ? route.onSend : [route.onSend]) : [];
    route.onSend = [...existingSend, onSend];
  });
}
