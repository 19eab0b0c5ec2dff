/**
 * `GET /practice/v1/events` (docs/decisions/0014-practice-workspace.md, "Live calendar"): a
 * `text/event-stream` of the practice's outbox events (src/domain/practices/appointments/events-feed.ts).
 * Each message: `id` the cursor, `event` the update type, `data` `{appointment_id, update_type,
 * changed_attributes, occurred_at}`. `Last-Event-ID` resumes after that event; without it the stream
 * starts now. Each stream reads the outbox by cursor every `pollMs` (500 ms: events of any process
 * arrive within about a second and a half) and at once when this process's practice moves `kick()` it;
 * a comment every 15 s keeps proxies from closing it. A stream ends when the client goes away or the
 * application closes (never holding up `close()`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../../db/database.js';
import { currentCursor, parseCursor, practiceEventsAfter, type EventCursor } from '../../../domain/practices/appointments/events-feed.js';
import { requireReadingStaff } from '../../../domain/practices/appointments/scope.js';
import { staffOf } from '../../../http/practice-request.js';

export const KEEP_ALIVE_MS = 15_000;

/** Wakes every open stream of this application (after a practice move made here). */
export class EventStreams {
  private readonly open = new Set<{ wake(): void; end(): void; done: Promise<void> }>();

  kick(): void {
    for (const s of this.open) s.wake();
  }

  /** Ends every stream and waits for their loops (application close). */
  async closeAll(): Promise<void> {
    const all = [...this.open];
    for (const s of all) s.end();
    await Promise.all(all.map((s) => s.done));
  }

  /** Serves one stream on a hijacked reply until the client or the application ends it. */
  serve(db: Db, req: FastifyRequest, reply: FastifyReply, opts: { pollMs: number; keepAliveMs?: number }): void {
    const staff = staffOf(req);
    requireReadingStaff(staff);
    const header = req.headers['last-event-id'];
    const resume = typeof header === 'string' && header.trim() !== '' ? parseCursor(header) : undefined;
    const raw = reply.raw;
    let ended = false;
    let wakeUp: (() => void) | undefined;
    const wake = () => wakeUp?.();
    const end = () => {
      if (ended) return;
      ended = true;
      wake();
      // Closed outright once written: a client that does not read on would keep a half-closed socket open.
      raw.end(() => raw.destroy());
    };
    reply.hijack();
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // The connection ends with the stream: one left idle after it would hold up the server's close.
      connection: 'close',
      'x-accel-buffering': 'no',
      'x-request-id': String(req.id),
      'x-content-type-options': 'nosniff',
    });
    raw.write(': stream open\n\n');
    const keepAlive = setInterval(() => raw.write(': keep-alive\n\n'), opts.keepAliveMs ?? KEEP_ALIVE_MS);
    raw.on('close', end);
    const loop = async (): Promise<void> => {
      let cursor: EventCursor = resume ?? (await currentCursor(db));
      while (!ended) {
        let full = false;
        try {
          const read = await practiceEventsAfter(db, staff, cursor);
          cursor = read.cursor;
          full = read.events.length >= 200;
          for (const ev of read.events) {
            const { id, ...data } = ev;
            raw.write(`id: ${id}\nevent: ${ev.update_type}\ndata: ${JSON.stringify(data)}\n\n`);
          }
        } catch (err) {
          if (ended) break;
          req.log.warn({ err }, 'practice event stream read failed; retrying');
        }
        if (ended) break;
        if (!full) await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, opts.pollMs);
          wakeUp = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
    };
    const entry = { wake, end, done: Promise.resolve() };
    entry.done = loop()
      .catch((err: unknown) => req.log.warn({ err }, 'practice event stream failed'))
      .finally(() => {
        clearInterval(keepAlive);
        this.open.delete(entry);
        if (!raw.writableEnded) raw.end();
      });
    this.open.add(entry);
  }
}

/** Ends the streams before the server waits for its connections, so `close()` never waits for a stream. */
export function closeStreamsOnClose(app: FastifyInstance, streams: EventStreams): void {
  app.addHook('preClose', async () => streams.closeAll());
}
