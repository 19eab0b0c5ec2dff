/**
 * Applies the booking evaluator's decisions (evaluator-decide.ts) to rows the caller's transaction
 * has claimed (`FOR UPDATE`), for the whole batch at once (docs/api/appointments.md#moves-the-service-makes):
 * one statement releases the held time of the moves that release any, updates every appointment
 * and inserts every outbox event and audit row; a second one, only when a reschedule succeeded,
 * makes its new time current. The rows, events and audit rows are those `applyConfirmed`,
 * `applyBookingFailed`, `applyRescheduled` and `applyRescheduleFailed` (service-moves.ts) write one
 * row at a time (`moveChange` gives both the same event and audit action).
 *
 * A row whose decision failed is set aside for a minute (`evaluate_after`). When the batch
 * statement fails (a row that cannot be moved), it is rolled back and the rows are applied one at a
 * time, each in a savepoint, so only the rows that fail are set aside.
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Decision } from './evaluator-decide.js';
import { auditRecord, outboxRecord, type Actor } from './events.js';
import { moveChange } from './service-moves.js';

/** What a pass reports of each row it evaluated. */
export type EvaluationOutcome = 'confirmed' | 'booking_failed' | 'rescheduled' | 'reschedule_failed' | 'skipped' | 'error';

/** How long a row whose evaluation failed waits before it is tried again. */
export const RETRY_FAILED_ROW_MS = 60_000;

const SERVICE: Actor = { kind: 'service' };

/** The batch's rows as the statement reads them (JSON parameters: one statement text for any batch size). */
function statementRows(decisions: Decision[]) {
  const moves: { id: string; outcome: string; from_status: string }[] = [];
  const events: ReturnType<typeof outboxRecord>[] = [];
  const audits: ReturnType<typeof auditRecord>[] = [];
  for (const d of decisions) {
    moves.push({ id: d.row.id, outcome: d.outcome, from_status: d.row.appointment_status });
    if (d.outcome === 'skipped' || d.outcome === 'error') continue;
    const change = moveChange(SERVICE, d.row, d.outcome);
    events.push(outboxRecord(SERVICE, change));
    audits.push(auditRecord(SERVICE, { env: change.env, developerId: change.developerId, appointmentId: change.appointmentId, action: change.action }));
  }
  return { moves, events, audits };
}

/**
 * Applies `decisions` in one statement (two when a reschedule succeeded); throws when any row
 * cannot be moved (nothing is then written that the caller does not roll back).
 */
export async function applyDecisions(trx: Transaction<Database>, decisions: Decision[], now: Date): Promise<void> {
  if (decisions.length === 0) return;
  const { moves, events, audits } = statementRows(decisions);
  // Held time released (as service-moves.ts releases it): all of a failed booking's, the old (current)
  // time of a successful reschedule, the new (pending) time of a failed one.
  const released: [string, 'current' | 'pending'][] = [];
  const rescheduled: string[] = [];
  for (const d of decisions) {
    if (d.outcome === 'booking_failed') {
      released.push([d.row.id, 'current'], [d.row.id, 'pending']);
    } else if (d.outcome === 'rescheduled') {
      released.push([d.row.id, 'current']);
      rescheduled.push(d.row.id);
    } else if (d.outcome === 'reschedule_failed') {
      released.push([d.row.id, 'pending']);
    }
  }
  const retryAt = new Date(now.getTime() + RETRY_FAILED_ROW_MS);
  const { rows } = await sql<{ n: number }>`
    WITH m AS (
      SELECT * FROM json_to_recordset(${JSON.stringify(moves)}::json) AS m(id text, outcome text, from_status text)
    ), released AS (
      -- By (appointment_id, kind): the holds' primary key.
      DELETE FROM appointment_holds h
      USING unnest(${released.map((r) => r[0])}::text[], ${released.map((r) => r[1])}::text[]) AS r(appointment_id, kind)
      WHERE h.appointment_id = r.appointment_id AND h.kind = r.kind
    ), moved AS (
      UPDATE appointments a SET
        appointment_status = CASE WHEN m.outcome IN ('skipped', 'error') THEN a.appointment_status ELSE m.outcome END,
        confirmation_type = CASE WHEN m.outcome IN ('confirmed', 'booking_failed') AND a.confirmation_type = 'pending_evaluation' THEN 'auto'
                                 ELSE a.confirmation_type END,
        start_time = CASE WHEN m.outcome = 'rescheduled' THEN coalesce(a.pending_start_time, a.start_time) ELSE a.start_time END,
        end_time = CASE WHEN m.outcome = 'rescheduled' THEN coalesce(a.pending_end_time, a.end_time) ELSE a.end_time END,
        pending_start_time = CASE WHEN m.outcome IN ('rescheduled', 'reschedule_failed') THEN NULL ELSE a.pending_start_time END,
        pending_end_time = CASE WHEN m.outcome IN ('rescheduled', 'reschedule_failed') THEN NULL ELSE a.pending_end_time END,
        evaluate_after = CASE WHEN m.outcome = 'error' THEN ${retryAt}::timestamptz END,
        updated_at = CASE WHEN m.outcome IN ('skipped', 'error') THEN a.updated_at ELSE now() END
      FROM m
      WHERE a.id = ANY(${moves.map((x) => x.id)}::text[]) AND a.id = m.id AND a.appointment_status = m.from_status
      RETURNING a.id
    ), events AS (
      INSERT INTO outbox_events (id, env, developer_id, appointment_id, update_type, changed_attributes, status)
      SELECT e.id, e.env, e.developer_id, e.appointment_id, e.update_type, e.changed_attributes::jsonb, e.status
      FROM json_to_recordset(${JSON.stringify(events)}::json)
        AS e(id text, env text, developer_id text, appointment_id text, update_type text, changed_attributes text, status text)
      JOIN moved ON moved.id = e.appointment_id
    ), audits AS (
      INSERT INTO audit_log (env, developer_id, actor_client_id, actor_user_id, actor_kind, appointment_id, action, request_id)
      SELECT r.env, r.developer_id, r.actor_client_id, r.actor_user_id, r.actor_kind, r.appointment_id, r.action, r.request_id
      FROM json_to_recordset(${JSON.stringify(audits)}::json)
        AS r(env text, developer_id text, actor_client_id text, actor_user_id text, actor_kind text, appointment_id text, action text, request_id text)
      JOIN moved ON moved.id = r.appointment_id
    )
    SELECT count(*)::int AS n FROM moved`.execute(trx);
  const n = rows[0]!.n;
  // The rows are locked by the caller's claim, so each is still in the status it was decided from.
  if (n !== decisions.length) throw new Error(`evaluator: only ${n} of ${decisions.length} claimed appointments were still in the status they were decided from`);
  if (rescheduled.length > 0) {
    // After the statement above released the old current time (one hold of each kind per appointment).
    await sql`
      UPDATE appointment_holds h SET kind = 'current' FROM unnest(${rescheduled}::text[]) AS r(appointment_id)
      WHERE h.appointment_id = r.appointment_id AND h.kind = 'pending'`.execute(trx);
  }
}

/**
 * Applies `decisions` (see the module comment) and returns each row's outcome, in order;
 * `onRowError` hears of each row set aside.
 */
export async function applyBatch(
  trx: Transaction<Database>,
  decisions: Decision[],
  now: Date,
  onRowError?: (err: unknown, appointmentId: string) => void,
): Promise<{ appointmentId: string; outcome: EvaluationOutcome }[]> {
  let outcomes: EvaluationOutcome[] = decisions.map((d) => d.outcome);
  const failures = new Map<string, unknown>(decisions.flatMap((d) => (d.outcome === 'error' ? [[d.row.id, d.error] as const] : [])));
  await sql`SAVEPOINT evaluator_batch`.execute(trx);
  try {
    await applyDecisions(trx, decisions, now);
    await sql`RELEASE SAVEPOINT evaluator_batch`.execute(trx);
  } catch {
    await sql`ROLLBACK TO SAVEPOINT evaluator_batch`.execute(trx);
    outcomes = [];
    for (const d of decisions) {
      await sql`SAVEPOINT evaluator_row`.execute(trx);
      try {
        await applyDecisions(trx, [d], now);
        await sql`RELEASE SAVEPOINT evaluator_row`.execute(trx);
        outcomes.push(d.outcome);
      } catch (err) {
        await sql`ROLLBACK TO SAVEPOINT evaluator_row`.execute(trx);
        await trx.updateTable('appointments').set({ evaluate_after: new Date(now.getTime() + RETRY_FAILED_ROW_MS) }).where('id', '=', d.row.id).execute();
        failures.set(d.row.id, err);
        outcomes.push('error');
      }
    }
  }
  for (const [id, err] of failures) onRowError?.(err, id);
  return decisions.map((d, i) => ({ appointmentId: d.row.id, outcome: outcomes[i]! }));
}
