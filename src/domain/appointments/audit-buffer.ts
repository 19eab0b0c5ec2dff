/**
 * Read audit records, written in batches (one multi-row INSERT per `flushMs` or `maxBatch` reads)
 * so that recording who read which appointment does not put a write on every read. Changes are
 * still audited in their own transaction (events.ts). Make one per application and `close()` it on
 * shutdown; a crash can lose at most the last `flushMs` of read records.
 */
import { CompiledQuery, type Insertable, type Kysely } from 'kysely';
import type { AuditLogTable, Database } from '../../db/schema.js';

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

function flushQuery(batch: Insertable<AuditLogTable>[]): CompiledQuery {
  return CompiledQuery.raw(FLUSH_SQL, [JSON.stringify(batch)]);
}

export class AuditBuffer {
  private pending: Insertable<AuditLogTable>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly opts: { flushMs?: number; maxBatch?: number; onError?: (err: unknown) => void } = {},
  ) {}

  /** Queues a record; it keeps the time of the read (`at`), not the time of the flush. */
  add(record: Insertable<AuditLogTable>): void {
    record.at ??= new Date();
    this.pending.push(record);
    if (this.pending.length >= (this.opts.maxBatch ?? 200)) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.opts.flushMs ?? 50);
  }

  /** Writes what is pending; resolves when it (and any earlier flush) is stored. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) {
      this.inFlight = this.inFlight.then(() =>
        this.db
          .executeQuery(flushQuery(batch))
          .then(
            () => undefined,
            (err: unknown) => this.opts.onError?.(err),
          ),
      );
    }
    return this.inFlight;
  }

  close(): Promise<void> {
    return this.flush();
  }
}
