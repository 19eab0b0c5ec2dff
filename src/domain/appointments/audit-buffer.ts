/**
 * Read audit records, written in batches (one multi-row INSERT per `flushMs` or `maxBatch` reads)
 * so that recording who read which appointment does not put a write on every read. Changes are
 * still audited in their own transaction (events.ts). Make one per application and `close()` it on
 * shutdown; a crash can lose at most the last `flushMs` of read records.
 */
import type { Insertable, Kysely } from 'kysely';
import { auditFlushQuery } from '../../db/fast/audit-flush.js';
import type { AuditLogTable, Database } from '../../db/schema.js';

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
          .executeQuery(auditFlushQuery(batch))
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
