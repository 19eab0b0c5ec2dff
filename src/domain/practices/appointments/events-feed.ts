/**
 * The practice's live events (docs/decisions/0014-practice-workspace.md, "Live calendar"): the
 * outbox rows (the same events the webhook worker delivers, docs/api/webhooks.md#event-body) of the
 * practice's appointments, in order, read by cursor. No patient data: the appointment id, the
 * update type, the changed attributes and the time.
 *
 * Order and cursor. An event's `occurred_at` is its transaction's start (`now()`), and transactions
 * commit in any order, so "everything after the last cursor" could skip an event whose transaction
 * started earlier but committed later. So a read returns only events before a *horizon*: the start
 * of the oldest transaction still open on the database (from `pg_stat_activity`; every event of a
 * transaction still open is at or after it), and never more than `HORIZON_CAP_MS` in the past, so a
 * forgotten session cannot stall the stream. Events are then final in `(occurred_at, id)` order and
 * the cursor `<microseconds>_<id>` never skips one, except an event of a transaction open longer
 * than the cap (appointment transactions take milliseconds). On PGlite (one session) no other
 * transaction is ever open during a read.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { invalidInput } from '../../errors.js';
import type { StaffPrincipal } from '../staff-principal.js';
import { requireReadingStaff } from './scope.js';

/** How far behind now the horizon may fall (ms): an event is delivered at most this late (plus one poll). */
export const HORIZON_CAP_MS = 1_000;
/** Events read per query at most. */
export const EVENT_BATCH = 200;

export interface PracticeEvent {
  /** The cursor of this event, the SSE `id`. */
  id: string;
  appointment_id: string;
  update_type: 'created' | 'updated' | 'cancelled';
  changed_attributes: { attribute_path: string; attachment_type?: string }[];
  occurred_at: string;
}

export interface EventCursor {
  /** Microseconds since the epoch, as text (exact in the database). */
  us: string;
  id: string;
}

const CURSOR = /^(\d{1,18})_([A-Za-z0-9-]{0,64})$/;

/** Reads a `Last-Event-ID`: `invalid` naming the header when it is not a cursor of this stream. */
export function parseCursor(text: string): EventCursor {
  const m = CURSOR.exec(text.trim());
  if (!m) throw invalidInput('Last-Event-ID', 'is not an event id of this stream');
  return { us: m[1]!, id: m[2]! };
}

export const formatCursor = (c: EventCursor): string => `${c.us}_${c.id}`;

/** The instant (µs) before which every event is final (see the module comment). */
async function horizon(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ us: string }>`
    SELECT (extract(epoch FROM greatest(now() - make_interval(secs => ${HORIZON_CAP_MS / 1000}), least(now(), coalesce(
      (SELECT min(xact_start) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL),
      now())))) * 1000000)::bigint::text AS us`.execute(db);
  return rows[0]!.us;
}

/** Where a stream without `Last-Event-ID` starts: at the horizon, so it carries only new events. */
export async function currentCursor(db: Kysely<Database>): Promise<EventCursor> {
  return { us: await horizon(db), id: '' };
}

const instant = (us: string) => sql<Date>`(timestamptz 'epoch' + ${us}::bigint * interval '1 microsecond')`;

/**
 * The practice's final events after `cursor`, oldest first (at most `limit`), and the cursor to read
 * on from. For a provider user, only their own provider's appointments.
 */
export async function practiceEventsAfter(
  db: Kysely<Database>,
  staff: StaffPrincipal,
  cursor: EventCursor,
  limit = EVENT_BATCH,
): Promise<{ events: PracticeEvent[]; cursor: EventCursor }> {
  requireReadingStaff(staff);
  const until = await horizon(db);
  let q = db
    .selectFrom('outbox_events as o')
    .innerJoin('appointments as a', 'a.id', 'o.appointment_id')
    .select([
      'o.id', 'o.appointment_id', 'o.update_type', 'o.changed_attributes', 'o.occurred_at',
      sql<string>`(extract(epoch FROM o.occurred_at) * 1000000)::bigint::text`.as('us'),
    ])
    .where('o.env', '=', staff.env)
    .where('a.env', '=', staff.env)
    .where('a.practice_id', '=', staff.practiceId)
    .where(sql<boolean>`(o.occurred_at, o.id) > (${instant(cursor.us)}, ${cursor.id})`)
    .where('o.occurred_at', '>=', instant(cursor.us))
    .where('o.occurred_at', '<', instant(until));
  if (staff.role === 'provider') q = q.where('a.provider_id', '=', staff.providerId ?? '');
  const rows = await q.orderBy('o.occurred_at').orderBy('o.id').limit(limit).execute();
  const events = rows.map((r) => ({
    id: formatCursor({ us: r.us, id: r.id }),
    appointment_id: r.appointment_id,
    update_type: r.update_type,
    changed_attributes: r.changed_attributes,
    occurred_at: r.occurred_at.toISOString(),
  }));
  const last = rows.at(-1);
  // A full batch: read on from its last event. Otherwise everything before the horizon is read.
  const next = last ? { us: last.us, id: last.id } : BigInt(until) > BigInt(cursor.us) ? { us: until, id: '' } : cursor;
  return { events, cursor: rows.length < limit && BigInt(until) > BigInt(next.us) ? { us: until, id: '' } : next };
}
