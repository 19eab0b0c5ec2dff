/**
 * What every appointment change writes in its own transaction: the webhook event into the outbox
 * (docs/api/webhooks.md#event-body) and an audit record of who did it.
 *
 * Decision: every change writes its event. A change the developer's own API calls made (a client or
 * user credential of that developer) is written with status `skipped`, so the delivery worker, which
 * only claims `pending` rows, never sends it, while the history stays complete; provider, operator and
 * service moves are written `pending` and are delivered.
 */
import type { Insertable, Kysely, QueryCreator, Transaction } from 'kysely';
import type { AuditLogTable, Database, Env, OutboxEventsTable } from '../../db/schema.js';
import { uuid } from '../../lib/ids.js';
import { AuditBuffer } from './audit-buffer.js';
import type { Principal } from '../credentials/principal.js';

export type Actor =
  | { kind: 'principal'; principal: Principal; requestId?: string }
  | { kind: 'operator'; requestId?: string }
  /** A practice's staff member (docs/decisions/0014-practice-workspace.md): a provider-side move, delivered to the booking developer. */
  | { kind: 'staff'; userId: string; practiceId: string; requestId?: string }
  | { kind: 'service' };

/** One entry of `changed_attributes` (docs/api/webhooks.md#event-body), e.g. `patient.uploaded_attachments` with its `attachment_type`. */
export interface ChangedAttribute {
  attribute_path: string;
  attachment_type?: string;
}

export interface ChangeRecord {
  env: Env;
  developerId: string;
  appointmentId: string;
  updateType: 'created' | 'updated' | 'cancelled';
  /** Attribute paths, or entries that carry more (an upload's `attachment_type`). */
  changedAttributes: (string | ChangedAttribute)[];
  /** Audit action name, e.g. `create`, `confirm`, `evaluate:confirmed`. */
  action: string;
}

/** `changed_attributes` as stored (jsonb) and sent: `[{attribute_path, attachment_type?}]` (docs/api/webhooks.md#event-body). */
export function changedAttributes(list: ChangeRecord['changedAttributes']): ChangedAttribute[] {
  return list.map((a) => (typeof a === 'string' ? { attribute_path: a } : { ...a }));
}

/**
 * The outbox row of a change (docs/api/webhooks.md#event-body): `skipped` when the developer's own call made it (see the
 * module comment); `changed_attributes` is written as JSON text for the jsonb column.
 */
export function outboxRecord(actor: Actor, c: ChangeRecord): Insertable<OutboxEventsTable> {
  return {
    id: uuid(),
    env: c.env,
    developer_id: c.developerId,
    appointment_id: c.appointmentId,
    update_type: c.updateType,
    changed_attributes: JSON.stringify(changedAttributes(c.changedAttributes)),
    status: actor.kind === 'principal' ? 'skipped' : 'pending',
  };
}

/** Writes the outbox event and the audit record of a change (one statement). */
export async function recordChange(trx: Transaction<Database>, actor: Actor, c: ChangeRecord): Promise<void> {
  await trx
    .with('event', (qc) => qc.insertInto('outbox_events').values(outboxRecord(actor, c)))
    .insertInto('audit_log')
    .values(auditRecord(actor, { env: c.env, developerId: c.developerId, appointmentId: c.appointmentId, action: c.action }))
    .execute();
}

/**
 * The same two rows as {@link recordChange}, as data-modifying `WITH` parts (`event`, `audit`) of a
 * statement the caller finishes, so that a change and its records go in one round trip.
 */
export function withChangeRecorded<DB extends Database>(qc: QueryCreator<DB>, actor: Actor, c: ChangeRecord) {
  return (qc as unknown as QueryCreator<Database>)
    .with('event', (q) => q.insertInto('outbox_events').values(outboxRecord(actor, c)))
    .with('audit', (q) => q.insertInto('audit_log').values(auditRecord(actor, { env: c.env, developerId: c.developerId, appointmentId: c.appointmentId, action: c.action })));
}

/** The audit row of a read or change. */
export function auditRecord(actor: Actor, a: { env: Env; developerId: string; appointmentId: string; action: string }): Insertable<AuditLogTable> {
  const p = actor.kind === 'principal' ? actor.principal : undefined;
  return {
    env: a.env,
    developer_id: a.developerId,
    actor_client_id: p?.clientId ?? null,
    actor_user_id: p?.kind === 'user' ? p.userId : actor.kind === 'staff' ? actor.userId : null,
    actor_kind: p ? (p.kind === 'user' ? 'user' : 'client') : actor.kind === 'operator' ? 'operator' : actor.kind === 'staff' ? 'staff' : 'service',
    appointment_id: a.appointmentId,
    action: a.action,
    request_id: actor.kind !== 'service' ? (actor.requestId ?? null) : null,
  };
}

/** Records who read or changed which appointment (never patient data); reads may go through an `AuditBuffer`. */
export async function audit(
  trx: Transaction<Database> | Kysely<Database> | AuditBuffer,
  actor: Actor,
  a: { env: Env; developerId: string; appointmentId: string; action: string },
): Promise<void> {
  const record = auditRecord(actor, a);
  if (trx instanceof AuditBuffer) trx.add(record);
  else await trx.insertInto('audit_log').values(record).execute();
}
