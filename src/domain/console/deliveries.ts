/**
 * The developer's webhook delivery log and replay, from the developer console (docs/console.md,
 * "Webhooks"): every attempt, newest first, with its time, event, appointment, update type, attempt
 * number, status code, latency, error and the first bytes of the receiver's answer; filtered by
 * appointment and by the event's status; one event or every failed one since a time sent again
 * through the delivery worker (src/webhooks/worker.ts), with a fresh 48-hour window.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { replayedState } from '../../webhooks/worker.js';
import { conflict, invalidFields, notFound, type FieldError } from '../errors.js';
import { assertDeveloper, shownAnswer } from './webhooks.js';

/** Event statuses the log filters on (docs/api/webhooks.md#delivery-and-retries). */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryLogQuery {
  appointment_id?: string | undefined;
  /** The event's status now: `pending` (being retried), `delivered` or `failed`. */
  status?: string | undefined;
  cursor?: string | undefined;
  page_size?: number | undefined;
}

export interface DeliveryAttempt {
  attempted_at: string;
  event_id: string;
  /** `appointment`, or `test` for a test event sent from the console. */
  event_kind: 'appointment' | 'test';
  /** Null for a test event. */
  appointment_id: string | null;
  update_type: 'created' | 'updated' | 'cancelled' | null;
  changed_attributes: { attribute_path: string; attachment_type?: string }[];
  event_status: string;
  attempt: number;
  url: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_excerpt: string | null;
  answer_withheld: boolean;
}

const encodeCursor = (at: Date, id: string): string => Buffer.from(`${at.toISOString()}|${id}`).toString('base64url');
function decodeCursor(cursor: string): { at: Date; id: string } | undefined {
  const [at, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const date = at ? new Date(at) : undefined;
  return date && !Number.isNaN(date.getTime()) && id && /^\d+$/.test(id) ? { at: date, id } : undefined;
}

/**
 * One page of the developer's delivery attempts in `env`, newest first (docs/console.md, "Webhooks").
 * Throws `invalid` naming `status` or `cursor`, `not_found` for an unknown developer.
 */
export async function deliveryLog(
  db: Db,
  env: Env,
  developerId: string,
  q: DeliveryLogQuery,
): Promise<{ deliveries: DeliveryAttempt[]; next_cursor: string | null }> {
  const size = q.page_size ?? 50;
  const cursor = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined;
  const errors: FieldError[] = [];
  if (q.cursor !== undefined && !cursor) errors.push({ field: 'cursor', message: 'is not a cursor this API gave' });
  if (q.status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(q.status)) errors.push({ field: 'status', message: `must be one of ${DELIVERY_STATUSES.join(', ')}` });
  if (errors.length) throw invalidFields(errors);
  await assertDeveloper(db, env, developerId);
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('outbox_events as e', 'e.id', 'd.event_id')
    .select([
      'd.id', 'd.attempted_at', 'd.event_id', 'e.kind', 'e.appointment_id', 'e.update_type', 'e.changed_attributes', 'e.status as event_status',
      'd.attempt', 'd.url', 'd.status_code', 'd.latency_ms', 'd.error', 'd.response_excerpt', 'd.answer_withheld',
    ])
    .where('d.developer_id', '=', developerId)
    .where('d.env', '=', env);
  if (q.appointment_id !== undefined) query = query.where('e.appointment_id', '=', q.appointment_id).where('e.kind', '=', 'appointment');
  if (q.status !== undefined) query = query.where('e.status', '=', q.status as DeliveryStatus);
  if (cursor) query = query.where((eb) => eb.or([eb('d.attempted_at', '<', cursor.at), eb.and([eb('d.attempted_at', '=', cursor.at), eb('d.id', '<', cursor.id)])]));
  const rows = await query.orderBy('d.attempted_at', 'desc').orderBy('d.id', 'desc').limit(size + 1).execute();
  const page = rows.slice(0, size);
  const last = page[page.length - 1];
  return {
    deliveries: page.map((r) => {
      const test = r.kind === 'test';
      return {
        attempted_at: new Date(r.attempted_at).toISOString(),
        event_id: r.event_id,
        event_kind: r.kind,
        appointment_id: test ? null : r.appointment_id,
        update_type: test ? null : r.update_type,
        changed_attributes: r.changed_attributes,
        event_status: r.event_status,
        attempt: r.attempt,
        url: r.url,
        latency_ms: r.latency_ms,
        ...shownAnswer(r),
      };
    }),
    next_cursor: rows.length > size && last ? encodeCursor(new Date(last.attempted_at), String(last.id)) : null,
  };
}

/**
 * Sends one event of the developer again (docs/console.md, "Webhooks"): a delivered, failed or
 * `no_endpoint` event becomes due now with a fresh 48-hour window; the delivery worker sends it.
 * Throws `not_found` for an event of another developer or environment (or none), `conflict` for an
 * event the developer's own call made (`skipped`, never sent) or one already waiting to be sent.
 */
export async function replayDelivery(db: Db, env: Env, developerId: string, eventId: string, now = new Date()): Promise<{ event_id: string; status: 'pending' }> {
  const res = await db
    .updateTable('outbox_events')
    .set(replayedState(now))
    .where('id', '=', eventId)
    .where('developer_id', '=', developerId)
    .where('env', '=', env)
    .where('status', 'in', ['delivered', 'failed', 'no_endpoint'])
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 1) return { event_id: eventId, status: 'pending' };
  const event = await db.selectFrom('outbox_events').select('status').where('id', '=', eventId).where('developer_id', '=', developerId).where('env', '=', env).executeTakeFirst();
  if (!event) throw notFound(`event ${eventId} not found`, 'event_id');
  if (event.status === 'skipped') throw conflict('this change was made by your own call: such events are never sent', 'event_id');
  throw conflict('this event is already waiting to be sent', 'event_id');
}

/**
 * Sends again every failed or `no_endpoint` event of the developer that occurred at or after `since`
 * (docs/console.md, "Webhooks"); answers how many. Delivered, pending and `skipped` events are left.
 */
export async function replayFailedSince(db: Db, env: Env, developerId: string, since: Date, now = new Date()): Promise<{ replayed: number }> {
  if (Number.isNaN(since.getTime())) throw invalidFields([{ field: 'since', message: 'must be a date-time' }]);
  await assertDeveloper(db, env, developerId);
  const res = await db
    .updateTable('outbox_events')
    .set(replayedState(now))
    .where('developer_id', '=', developerId)
    .where('env', '=', env)
    .where('occurred_at', '>=', since)
    .where('status', 'in', ['failed', 'no_endpoint'])
    .executeTakeFirst();
  return { replayed: Number(res.numUpdatedRows) };
}
