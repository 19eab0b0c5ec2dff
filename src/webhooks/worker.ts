/**
 * The webhook delivery worker (docs/api/webhooks.md#delivery-and-retries): claims due outbox events with row locks
 * (`FOR UPDATE SKIP LOCKED` plus a lease, so several processes never send one event at once and a
 * crashed process's claim expires), signs exactly the bytes it sends, records every attempt
 * (status, latency, error; never patient data), retries transport errors, timeouts, 408, 429 and 5xx
 * with exponential backoff and equal jitter for up to 48 hours, then marks the event failed. A refused
 * target (issue #5 §3) fails the event at once; an event of a developer without a receiver is marked
 * `no_endpoint` and can be replayed once one is set.
 */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Env } from '../db/schema.js';
import { endpointOfRow, type WebhookEndpoint } from './endpoints.js';
import { testWebhookBody, webhookBody, type ChangedAttribute } from './payload.js';
import { isRetryable, sendWebhook, type SendResult } from './send.js';
import { signatureHeader } from './signature.js';
import { policyFor, type TargetPolicy } from './target-policy.js';

export const RETRY_WINDOW_MS = 48 * 3600_000;
/** A claim's lease: longer than one delivery's timeout; an expired lease makes the event claimable again. */
const LEASE_SECONDS = 30;
/** What a `no_endpoint` event's `last_error` says. */
const NO_ENDPOINT = 'no webhook endpoint registered';
/** Events claimed per pass; a full pass is followed by another at once (src/jobs/webhook-delivery.ts). */
export const BATCH = 20;

export interface WorkerOptions {
  env: Env;
  allowPrivateTargets: boolean;
  /**
   * Whether what a private receiver answered may be shown to the developer (docs/console.md,
   * "Webhooks"): only where nobody but the machine's own user can reach the service (a sandbox on a
   * loopback address, `isLocalSandbox` in src/config.ts). Default false.
   */
  reflectPrivateAnswers?: boolean;
  /** First retry delay; doubles per attempt up to `maxDelayMs` (default 5 s, 1 h). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  now?: () => Date;
  random?: () => number;
}

interface ClaimedEvent {
  id: string;
  env: Env;
  developer_id: string;
  appointment_id: string;
  update_type: 'created' | 'updated' | 'cancelled';
  changed_attributes: ChangedAttribute[];
  attempts: number;
  occurred_at: Date;
  retry_from: Date | null;
  kind: 'appointment' | 'test';
}

/**
 * Delay before attempt `n + 1` after `n` failed attempts (docs/api/webhooks.md#delivery-and-retries): exponential (`base`, doubling,
 * at most `max`) with equal jitter — uniformly between half of that step and all of it.
 */
export function backoffMs(attempts: number, base: number, max: number, random: () => number): number {
  const ceiling = Math.min(max, base * 2 ** Math.max(0, attempts - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** A claimed event with its developer's receiver as the claim read it (`url` null: none). */
type Claimed = ClaimedEvent & { url: string | null; key: string | null; previous_key: string | null; previous_key_expires_at: Date | null };

/**
 * Claims the pass's due events (at most `BATCH`, `FOR UPDATE SKIP LOCKED`) in one statement that
 * also reads each one's receiver: events whose developer has none are settled `no_endpoint`
 * (replayable once one is set) and not leased; the others are leased for `LEASE_SECONDS` and come
 * back with the receiver's row, so a pass reads nothing else before sending.
 */
async function claim(db: Db, env: Env): Promise<Claimed[]> {
  const res = await sql<Claimed>`
    WITH due AS (
      SELECT o.id, w.url, w.key, w.previous_key, w.previous_key_expires_at
      FROM outbox_events o LEFT JOIN webhook_endpoints w ON w.developer_id = o.developer_id
      WHERE o.status = 'pending' AND o.env = ${env} AND o.next_attempt_at <= now()
        AND (o.locked_until IS NULL OR o.locked_until < now())
      ORDER BY o.next_attempt_at
      LIMIT ${BATCH}
      FOR UPDATE OF o SKIP LOCKED)
    UPDATE outbox_events e SET
      locked_until = CASE WHEN due.url IS NOT NULL THEN now() + make_interval(secs => ${LEASE_SECONDS}) END,
      status = CASE WHEN due.url IS NOT NULL THEN e.status ELSE 'no_endpoint' END,
      last_error = CASE WHEN due.url IS NOT NULL THEN e.last_error ELSE ${NO_ENDPOINT} END
    FROM due WHERE e.id = due.id
    RETURNING e.id, e.env, e.developer_id, e.appointment_id, e.update_type, e.changed_attributes, e.attempts, e.occurred_at, e.retry_from, e.kind,
      due.url, due.key, due.previous_key, due.previous_key_expires_at`.execute(db);
  const at = (v: Date | string | null) => (v === null ? null : new Date(v));
  return res.rows.map((r) => ({ ...r, occurred_at: new Date(r.occurred_at), retry_from: at(r.retry_from), previous_key_expires_at: at(r.previous_key_expires_at) }));
}

/**
 * Signs and sends one event to `endpoint` (docs/api/webhooks.md#signature): an appointment event's
 * body (docs/api/webhooks.md#event-body), or a console test event's (docs/console.md, "Webhooks").
 * `webhook-id` is the event's id, the same on every attempt.
 */
export async function sendEvent(
  e: Pick<ClaimedEvent, 'id' | 'developer_id' | 'appointment_id' | 'update_type' | 'changed_attributes' | 'occurred_at' | 'kind'>,
  endpoint: WebhookEndpoint,
  now: Date,
  policy: TargetPolicy,
): Promise<SendResult> {
  const body = JSON.stringify(
    e.kind === 'test'
      ? testWebhookBody({ eventId: e.id, developerId: e.developer_id }, now)
      : webhookBody({ appointmentId: e.appointment_id, occurredAt: e.occurred_at, updateType: e.update_type, changedAttributes: e.changed_attributes }, now),
  );
  const timestamp = Math.floor(now.getTime() / 1000);
  return sendWebhook(endpoint.url, body, { 'webhook-id': e.id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(endpoint.keys, timestamp, body) }, policy);
}

/**
 * What an attempt's record keeps of the answer: the excerpt, unless the receiver's address was private
 * and such answers may not be reflected (then `answer_withheld`, and the console shows neither the
 * status nor the excerpt; docs/webhooks.md, "Where webhooks may go").
 */
export function answerRecord(result: SendResult, reflectPrivateAnswers: boolean): { response_excerpt: string | null; answer_withheld: boolean } {
  const withheld = result.privateTarget && !reflectPrivateAnswers;
  return { response_excerpt: withheld ? null : result.excerpt, answer_withheld: withheld };
}

/** Sends one claimed event to its developer's receiver and records the outcome (docs/api/webhooks.md#delivery-and-retries; the record never holds the body). */
async function deliver(db: Db, e: ClaimedEvent, endpoint: WebhookEndpoint, o: Required<WorkerOptions>): Promise<void> {
  const now = o.now();
  const result = await sendEvent(e, endpoint, now, policyFor(o.env, o.allowPrivateTargets));
  const attempt = e.attempts + 1;
  const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  const error = ok ? null : (result.error ?? `HTTP ${result.statusCode}`);
  const nextAt = new Date(o.now().getTime() + backoffMs(attempt, o.baseDelayMs, o.maxDelayMs, o.random));
  const giveUp = !ok && (result.refused || !isRetryable(result) || nextAt.getTime() > (e.retry_from ?? e.occurred_at).getTime() + RETRY_WINDOW_MS);
  // The attempt's record and the event's new state in one statement (atomic, one round trip).
  await db
    .with('attempt', (q) =>
      q
        .insertInto('webhook_deliveries')
        .values({ env: e.env, developer_id: e.developer_id, event_id: e.id, attempt, url: endpoint.url, status_code: result.statusCode, latency_ms: result.latencyMs, error, ...answerRecord(result, o.reflectPrivateAnswers) })
        .returning('event_id'),
    )
    .updateTable('outbox_events')
    .set({
      attempts: attempt,
      locked_until: null,
      last_error: error,
      ...(ok ? { status: 'delivered', delivered_at: o.now() } : giveUp ? { status: 'failed' } : { next_attempt_at: nextAt }),
    })
    .where('id', '=', e.id)
    .execute();
}

export interface WebhookWorker {
  /** Claims every due event once (at most `BATCH`) and sends those with a receiver; returns how many it claimed (sent, or settled `no_endpoint`). */
  runOnce(): Promise<number>;
}

/** Creates the worker; the webhook delivery job (src/jobs/webhook-delivery.ts) runs its passes in a loop. */
export function createWebhookWorker(db: Db, options: WorkerOptions): WebhookWorker {
  const o = {
    reflectPrivateAnswers: false,
    baseDelayMs: 5000,
    maxDelayMs: 3600_000,
    now: () => new Date(),
    random: Math.random,
    ...options,
  };
  const runOnce = async (): Promise<number> => {
    const claimed = await claim(db, o.env);
    const now = o.now();
    await Promise.all(claimed.flatMap((e) => (e.url !== null && e.key !== null ? [deliver(db, e, endpointOfRow({ ...e, url: e.url, key: e.key }, now), o)] : [])));
    return claimed.length;
  };
  return { runOnce };
}

/**
 * An event's state when it is sent again (docs/api/webhooks.md#delivery-and-retries): due now, with
 * a fresh 48-hour retry window from `now` and its attempts counted from zero.
 */
export function replayedState(now: Date) {
  return { status: 'pending' as const, next_attempt_at: now, locked_until: null, attempts: 0, retry_from: now };
}

/**
 * `webhook replay` (docs/api/admin.md#webhooks, docs/api/webhooks.md#delivery-and-retries): sends again every delivered, failed or `no_endpoint` event of the
 * developer since `since`, with a fresh 48-hour window. Changes the developer's own calls made (`skipped`)
 * are never sent.
 */
export async function replayEvents(db: Db, developerId: string, since: Date): Promise<number> {
  const res = await db
    .updateTable('outbox_events')
    .set(replayedState(new Date()))
    .where('developer_id', '=', developerId)
    .where('occurred_at', '>=', since)
    .where('status', 'in', ['delivered', 'failed', 'no_endpoint'])
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** `webhook deliveries` (docs/api/admin.md#webhooks): what was sent to the developer, newest first (no patient data exists here). */
export async function listDeliveries(db: Db, developerId: string, limit = 100) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('outbox_events as e', 'e.id', 'd.event_id')
    .select(['d.event_id', 'e.appointment_id', 'e.update_type', 'e.changed_attributes', 'e.status as event_status', 'd.attempt', 'd.url', 'd.status_code', 'd.latency_ms', 'd.error', 'd.attempted_at'])
    .where('d.developer_id', '=', developerId)
    .orderBy('d.attempted_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(limit)
    .execute();
}
