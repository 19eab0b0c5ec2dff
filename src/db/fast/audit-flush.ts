/**
 * The read-audit buffer's flush (src/domain/appointments/audit-buffer.ts) as one hand-written
 * statement (docs/decisions/0012-fast-paths.md).
 */
import { CompiledQuery, type Insertable } from 'kysely';
import type { AuditLogTable } from '../schema.js';

/**
 * One statement text for every batch size: the rows travel as one JSON array (serialized natively)
 * and PostgreSQL expands it. A multi-row `VALUES` list would be a different statement (parse, plan,
 * prepared-statement slot) for each batch size, and building it with the query builder cost
 * milliseconds per flush; one array parameter per column cost the driver's per-element escaping.
 */
const FLUSH_SQL = `INSERT INTO audit_log (env, developer_id, actor_client_id, actor_user_id, actor_kind, appointment_id, action, request_id, at)
  SELECT env, developer_id, actor_client_id, actor_user_id, actor_kind, appointment_id, action, request_id, at
  FROM json_to_recordset($1::json) AS r(env text, developer_id text, actor_client_id text, actor_user_id text, actor_kind text,
    appointment_id text, action text, request_id text, at timestamptz)`;

/** The one statement that inserts a batch of audit records. */
export function auditFlushQuery(batch: Insertable<AuditLogTable>[]): CompiledQuery {
  return CompiledQuery.raw(FLUSH_SQL, [JSON.stringify(batch)]);
}
