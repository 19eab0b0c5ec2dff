/**
 * The practice audit log (migration 0023; docs/decisions/0019-practice-visit-reasons.md, "Audit"):
 * one row per saved schedule change of a practice (weekly hours, time off, settings, visit reasons),
 * with the staff member as actor, written in the change's own transaction. Ids only, never patient data.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { PracticeCaller } from './scope.js';

/** What a schedule change did (`practice_audit_log.action`). */
export type ScheduleAction =
  | 'schedule:weekly_hours_replaced'
  | 'schedule:settings_changed'
  | 'schedule:time_off_added'
  | 'schedule:time_off_removed'
  | 'schedule:visit_reasons_set';

/** One audit row of a schedule change. */
export interface ScheduleAudit {
  action: ScheduleAction;
  providerId: string;
  providerLocationId?: string | null | undefined;
  /** The changed object when it has an id of its own (a time off). */
  subjectId?: string | null | undefined;
  requestId?: string | undefined;
}

/** Writes the audit row of a schedule change by `caller` (pass the change's transaction). */
export async function auditScheduleChange(trx: Kysely<Database>, caller: PracticeCaller, a: ScheduleAudit): Promise<void> {
  await trx.insertInto('practice_audit_log').values({
    env: caller.env,
    practice_id: caller.practiceId,
    actor_kind: 'staff',
    actor_user_id: caller.userId,
    action: a.action,
    provider_id: a.providerId,
    provider_location_id: a.providerLocationId ?? null,
    subject_id: a.subjectId ?? null,
    request_id: a.requestId ?? null,
  }).execute();
}
