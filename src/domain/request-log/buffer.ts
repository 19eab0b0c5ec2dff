/**
 * The developer's request log, written in batches (docs/api/request-log.md): the HTTP layer adds one
 * entry per answered call of a developer's credential; one multi-row INSERT per `flushMs` or
 * `maxBatch` entries keeps a write off every request. A crash loses at most the last `flushMs`.
 * One buffer per application; `close()` it on shutdown.
 */
import type { Kysely } from 'kysely';
import { requestLogFlushQuery, type RequestLogEntry } from '../../db/fast/request-log-flush.js';
import type { Database } from '../../db/schema.js';

export type { RequestLogEntry };

/** Most bytes of an error body kept (the body of a refused call; successes keep none). */
export const ERROR_BODY_MAX_BYTES = 4096;

export class RequestLogBuffer {
  private pending: RequestLogEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly opts: { flushMs?: number; maxBatch?: number; onError?: (err: unknown) => void } = {},
  ) {}

  /** Queues an entry. */
  add(entry: RequestLogEntry): void {
    this.pending.push(entry);
    if (this.pending.length >= (this.opts.maxBatch ?? 500)) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.opts.flushMs ?? 250);
  }

  /** Writes what is pending; resolves when it (and any earlier flush) is stored. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) {
      this.inFlight = this.inFlight.then(() =>
        this.db.executeQuery(requestLogFlushQuery(batch)).then(
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

/**
 * The error body to keep for a refused call: the JSON error body the API sent (docs/api/errors.md),
 * at most {@link ERROR_BODY_MAX_BYTES}; anything else (an HTML page, a cut body) is not kept.
 */
export function keptErrorBody(payload: unknown): unknown {
  if (typeof payload !== 'string' || payload.length > ERROR_BODY_MAX_BYTES) return null;
  try {
    const body = JSON.parse(payload) as unknown;
    return body !== null && typeof body === 'object' ? body : null;
  } catch {
    return null;
  }
}
