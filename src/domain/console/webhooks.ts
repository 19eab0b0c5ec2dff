/**
 * The developer's own webhook receiver, from the developer console (docs/console.md, "Webhooks";
 * docs/decisions/0015-developer-console.md): set the URL and key (a key is generated when none is
 * given and shown once), read what is set (never the key), and send a signed test event at once.
 * The same outbound address policy and validation as the operator's `webhook set`
 * (docs/webhooks.md, "Where webhooks may go").
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { uuid } from '../../lib/ids.js';
import { setWebhookEndpoint, webhookEndpointFor, WebhookInputError, webhookTargetErrors } from '../../webhooks/endpoints.js';
import { policyFor } from '../../webhooks/target-policy.js';
import { answerRecord, sendEvent } from '../../webhooks/worker.js';
import { conflict, invalidFields, invalidInput, notFound } from '../errors.js';

/** Where outbound requests may go and what of a private receiver's answer may be shown (src/config.ts). */
export interface OutboundOptions {
  allowPrivateTargets: boolean;
  reflectPrivateAnswers: boolean;
}

export interface ReceiverSet {
  url: string;
  /** The signing key, only when it was generated now: it is never shown again. */
  generated_key: string | null;
  /** Until when the replaced key still signs (docs/webhooks.md, "Registering a receiver"); null when no key overlaps. */
  previous_key_expires_at: string | null;
}

/** Throws `not_found` unless `developerId` is a developer of `env`. */
export async function assertDeveloper(db: Db, env: Env, developerId: string): Promise<void> {
  const dev = await db.selectFrom('developers').select('id').where('id', '=', developerId).where('env', '=', env).executeTakeFirst();
  if (!dev) throw notFound(`developer ${developerId} not found`, 'developer_id');
}

/**
 * Sets the developer's receiver (docs/console.md, "Webhooks"). Without `key`, 32 random bytes in
 * base64 become the key and are returned once. Changing the key keeps the old one signing for 24 hours.
 * Throws `invalid` naming `url` or `key`, `not_found` for an unknown developer.
 */
export async function setReceiver(
  db: Db,
  env: Env,
  developerId: string,
  input: { url: string; key?: string | undefined },
  opts: Pick<OutboundOptions, 'allowPrivateTargets'> & { now?: Date },
): Promise<ReceiverSet> {
  const errors = webhookTargetErrors({ url: input.url, key: input.key }, policyFor(env, opts.allowPrivateTargets), { url: 'url', key: 'key' });
  if (errors.length) throw invalidFields(errors);
  const key = input.key ?? randomBytes(32).toString('base64');
  try {
    await setWebhookEndpoint(db, { env, developerId, url: input.url, key, allowPrivateTargets: opts.allowPrivateTargets, ...(opts.now ? { now: opts.now } : {}) });
  } catch (e) {
    if (e instanceof WebhookInputError) throw e.field === 'developer_id' ? notFound(e.message, 'developer_id') : invalidInput(e.field, e.message);
    throw e;
  }
  const got = await getReceiver(db, env, developerId, opts.now);
  return { url: input.url, generated_key: input.key === undefined ? key : null, previous_key_expires_at: got?.previous_key_expires_at ?? null };
}

/** The developer's receiver without its keys, or null when none is set. */
export async function getReceiver(
  db: Db,
  env: Env,
  developerId: string,
  now = new Date(),
): Promise<{ url: string; updated_at: string; previous_key_expires_at: string | null } | null> {
  await assertDeveloper(db, env, developerId);
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(['url', 'updated_at', 'previous_key', 'previous_key_expires_at'])
    .where('developer_id', '=', developerId)
    .where('env', '=', env)
    .executeTakeFirst();
  if (!row) return null;
  const overlapping = row.previous_key !== null && row.previous_key_expires_at !== null && now < row.previous_key_expires_at;
  return { url: row.url, updated_at: row.updated_at.toISOString(), previous_key_expires_at: overlapping ? row.previous_key_expires_at!.toISOString() : null };
}

export interface TestEventResult {
  event_id: string;
  delivered: boolean;
  /** Null when nothing came back, or when the answer of a private address is withheld. */
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  /** The first bytes (at most 256) of the receiver's answer. */
  response_excerpt: string | null;
  answer_withheld: boolean;
}

/**
 * Sends one signed test event to the developer's receiver now (docs/console.md, "Webhooks"): the body
 * has `event_type` `test`, the headers and signatures are those of every delivery (all active keys),
 * and the attempt is recorded like any other (an outbox event of kind `test`, delivered or failed at
 * once, never retried by itself; it can be replayed). Throws `conflict` when no receiver is set.
 */
export async function sendTestEvent(db: Db, env: Env, developerId: string, opts: OutboundOptions & { now?: Date }): Promise<TestEventResult> {
  await assertDeveloper(db, env, developerId);
  const now = opts.now ?? new Date();
  const endpoint = await webhookEndpointFor(db, developerId, now);
  if (!endpoint) throw conflict('no webhook receiver is set: set one first', 'webhook');
  const event = {
    id: uuid(), developer_id: developerId, appointment_id: '', update_type: 'updated' as const, changed_attributes: [], occurred_at: now, kind: 'test' as const,
  };
  const result = await sendEvent(event, endpoint, now, policyFor(env, opts.allowPrivateTargets));
  const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  const error = ok ? null : (result.error ?? `HTTP ${result.statusCode}`);
  const answer = answerRecord(result, opts.reflectPrivateAnswers);
  // The event and its one attempt in one statement.
  await db
    .with('event', (q) =>
      q.insertInto('outbox_events').values({
        id: event.id, env, developer_id: developerId, appointment_id: '', update_type: 'updated', changed_attributes: '[]', kind: 'test',
        occurred_at: now, status: ok ? 'delivered' : 'failed', attempts: 1, last_error: error, ...(ok ? { delivered_at: new Date() } : {}),
      }),
    )
    .insertInto('webhook_deliveries')
    .values({ env, developer_id: developerId, event_id: event.id, attempt: 1, url: endpoint.url, status_code: result.statusCode, latency_ms: result.latencyMs, error, ...answer })
    .execute();
  return { event_id: event.id, delivered: ok, latency_ms: result.latencyMs, ...shownAnswer({ status_code: result.statusCode, error, ...answer }) };
}

/** The text shown instead of the error of an attempt whose answer is withheld. */
export const WITHHELD_ERROR = 'not delivered; what a private address answered is not shown';

/**
 * What the developer sees of an attempt's answer: all of it, or, when it is withheld (a private
 * receiver, docs/webhooks.md, "Where webhooks may go"), neither status, error text nor excerpt.
 */
export function shownAnswer(a: { status_code: number | null; error: string | null; response_excerpt: string | null; answer_withheld: boolean }) {
  if (!a.answer_withheld) return { status_code: a.status_code, error: a.error, response_excerpt: a.response_excerpt, answer_withheld: false };
  return { status_code: null, error: a.error === null ? null : WITHHELD_ERROR, response_excerpt: null, answer_withheld: true };
}
