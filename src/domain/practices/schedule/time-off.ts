/**
 * Time off (docs/scheduling.md, "Time off"; docs/decisions/0014-practice-workspace.md, "Schedules"):
 * a practice closes one of its providers (every location) or one provider-location for a range of
 * local dates, whole days or from a local time on the first date to a local time on the last. Each
 * save is a schedule change (`scheduleChange`): stranded bookings are listed, refused or allowed.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { invalidFields, notFound, type FieldError } from '../../errors.js';
import { prefixedId } from '../../../lib/ids.js';
import { isLocalDate, LocalClock, utcIso, wallMinutes } from '../../scheduling/local-time.js';
import type { SlotSource } from '../../scheduling/schedule-data.js';
import { practiceProvider, practiceProviderLocation, type PracticeCaller } from './scope.js';
import { scheduleChange, type ScheduleChangeOutcome } from './stranded.js';

/** The longest time off one entry may span (days, inclusive): a year. */
export const MAX_TIME_OFF_DAYS = 366;

export interface TimeOffInput {
  provider_id: string;
  /** Omitted: every location of the provider. */
  provider_location_id?: string | undefined;
  start_date: string;
  end_date: string;
  /** `HH:MM` on `start_date`; omitted: from midnight. */
  start_local?: string | undefined;
  /** `HH:MM` on `end_date`; omitted: to the end of the day. */
  end_local?: string | undefined;
  note?: string | undefined;
}

export interface TimeOff {
  time_off_id: string;
  provider_id: string;
  provider_location_id: string | null;
  start_date: string;
  end_date: string;
  start_local: string | null;
  end_local: string | null;
  note: string | null;
  created_by_user_id: string | null;
  created_at: string;
}

const HHMM = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;

/** The errors of a time-off input a schema cannot find: real dates, order, length, local times (docs/api/errors.md, "Validation"). */
export function timeOffErrors(input: Partial<Record<keyof TimeOffInput, unknown>>): FieldError[] {
  const errors: FieldError[] = [];
  const date = (f: 'start_date' | 'end_date') => {
    const v = input[f];
    if (typeof v !== 'string') return undefined;
    if (!isLocalDate(v)) errors.push({ field: f, message: 'must be a date YYYY-MM-DD' });
    return isLocalDate(v) ? v : undefined;
  };
  const start = date('start_date');
  const end = date('end_date');
  for (const f of ['start_local', 'end_local'] as const) {
    const v = input[f];
    if (typeof v === 'string' && !HHMM.test(v)) errors.push({ field: f, message: 'must be a local time HH:MM' });
  }
  if (start && end) {
    const days = new LocalClock().daysBetween(start, end);
    if (days < 0) errors.push({ field: 'end_date', message: 'must not be before start_date' });
    else if (days + 1 > MAX_TIME_OFF_DAYS) errors.push({ field: 'end_date', message: `time off spans at most ${MAX_TIME_OFF_DAYS} days` });
    const sl = typeof input.start_local === 'string' && HHMM.test(input.start_local) ? input.start_local : undefined;
    const el = typeof input.end_local === 'string' && HHMM.test(input.end_local) ? input.end_local : undefined;
    if (start === end && sl && el && wallMinutes(el) <= wallMinutes(sl)) errors.push({ field: 'end_local', message: 'must be after start_local on a single day' });
  }
  return errors;
}

type TimeOffRow = { id: string; provider_id: string; provider_location_id: string | null; start_date: string; end_date: string; start_local: string | null; end_local: string | null; note: string | null; created_by_user_id: string | null; created_at: Date };

function timeOffOf(r: TimeOffRow): TimeOff {
  return {
    time_off_id: r.id,
    provider_id: r.provider_id,
    provider_location_id: r.provider_location_id,
    start_date: String(r.start_date).slice(0, 10),
    end_date: String(r.end_date).slice(0, 10),
    start_local: r.start_local,
    end_local: r.end_local,
    note: r.note,
    created_by_user_id: r.created_by_user_id,
    created_at: utcIso(new Date(r.created_at)),
  };
}

const COLUMNS = [
  'id', 'provider_id', 'provider_location_id', sql<string>`start_date::text`.as('start_date'), sql<string>`end_date::text`.as('end_date'),
  sql<string | null>`to_char(start_local, 'HH24:MI')`.as('start_local'), sql<string | null>`to_char(end_local, 'HH24:MI')`.as('end_local'),
  'note', 'created_by_user_id', 'created_at',
] as const;

/** The provider-locations a time off of `input` closes: the one named, or every one of the provider. */
async function closedBy(db: Kysely<Database>, caller: PracticeCaller, input: { provider_id: string; provider_location_id?: string | null | undefined }): Promise<Map<string, SlotSource>> {
  if (input.provider_location_id) {
    const pl = await practiceProviderLocation(db, caller, input.provider_location_id);
    if (pl.providerId !== input.provider_id) throw notFound(`provider location ${input.provider_location_id} not found for provider ${input.provider_id}`, 'provider_location_id');
    return new Map([[pl.id, pl]]);
  }
  return practiceProvider(db, caller, input.provider_id);
}

/**
 * Saves time off for a provider or provider-location of the caller's practice (`not_found`
 * otherwise); `invalid` naming every bad field. A schedule change: with `dryRun` nothing is saved
 * and the stranded appointments are answered; stranded ones refuse it (`conflict`) unless `allowStranded`.
 */
export async function addTimeOff(
  db: Kysely<Database>,
  caller: PracticeCaller,
  input: TimeOffInput,
  opts: { dryRun?: boolean; allowStranded?: boolean; now?: Date; requestId?: string } = {},
): Promise<ScheduleChangeOutcome<TimeOff>> {
  const errors = timeOffErrors(input);
  if (errors.length) throw invalidFields(errors);
  const pls = await closedBy(db, caller, input);
  const audit = {
    caller,
    entry: { action: 'schedule:time_off_added' as const, providerId: input.provider_id, providerLocationId: input.provider_location_id ?? null, requestId: opts.requestId },
    subjectOf: (t: TimeOff) => t.time_off_id,
  };
  return scheduleChange(db, { env: caller.env, providerId: input.provider_id, pls, ...opts, audit }, async (trx) => {
    const row = await trx
      .insertInto('time_off')
      .values({
        id: prefixedId('to'),
        env: caller.env,
        practice_id: caller.practiceId,
        provider_id: input.provider_id,
        provider_location_id: input.provider_location_id ?? null,
        start_date: input.start_date,
        end_date: input.end_date,
        start_local: input.start_local ?? null,
        end_local: input.end_local ?? null,
        note: input.note ?? null,
        created_by_user_id: caller.userId,
        created_at: new Date(),
      })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
    return timeOffOf(row);
  });
}

/** The errors of a time-off listing's `from` and `to` past their schema: real dates (also for raw, unvalidated input). */
export function timeOffQueryErrors(q: { from?: unknown; to?: unknown }): FieldError[] {
  const errors: FieldError[] = [];
  for (const f of ['from', 'to'] as const) {
    const v = q[f];
    if (v !== undefined && (typeof v !== 'string' || !isLocalDate(v))) errors.push({ field: f, message: 'must be a date YYYY-MM-DD' });
  }
  return errors;
}

/**
 * The caller's practice's time off overlapping local dates `[from, to]` (either bound optional), of one
 * provider when `providerId` is given (`not_found` when not the practice's), by start date; at most `limit`.
 */
export async function listTimeOff(
  db: Kysely<Database>,
  caller: PracticeCaller,
  q: { providerId?: string | undefined; from?: string | undefined; to?: string | undefined; limit?: number },
): Promise<TimeOff[]> {
  const errors = timeOffQueryErrors(q);
  if (errors.length) throw invalidFields(errors);
  if (q.providerId !== undefined) await practiceProvider(db, caller, q.providerId);
  const providerId = caller.role === 'provider' ? (caller.providerId ?? '') : q.providerId;
  let sel = db.selectFrom('time_off').select(COLUMNS).where('env', '=', caller.env).where('practice_id', '=', caller.practiceId);
  if (providerId !== undefined) sel = sel.where('provider_id', '=', providerId);
  if (q.from !== undefined) sel = sel.where('end_date', '>=', q.from);
  if (q.to !== undefined) sel = sel.where('start_date', '<=', q.to);
  const rows = await sel.orderBy('start_date').orderBy('id').limit(q.limit ?? 1000).execute();
  return rows.map(timeOffOf);
}

/**
 * Removes time off of the caller's practice (`not_found` otherwise); frees its time at once. Never
 * strands anything. Returns whose time off it was (for the change's log line).
 */
export async function removeTimeOff(
  db: Kysely<Database>,
  caller: PracticeCaller,
  id: string,
  opts: { now?: Date; requestId?: string } = {},
): Promise<{ provider_id: string; provider_location_id: string | null }> {
  const row = await db.selectFrom('time_off').select(['provider_id', 'provider_location_id']).where('env', '=', caller.env)
    .where('practice_id', '=', caller.practiceId).where('id', '=', id).executeTakeFirst();
  if (!row || (caller.role === 'provider' && caller.providerId !== row.provider_id)) throw notFound(`time off ${id} not found`, 'time_off_id');
  const pls = await closedBy(db, caller, row).catch(() => new Map<string, SlotSource>());
  const audit = {
    caller,
    entry: { action: 'schedule:time_off_removed' as const, providerId: row.provider_id, providerLocationId: row.provider_location_id, requestId: opts.requestId },
    subjectOf: () => id,
  };
  // Removed by someone else meanwhile: not found, and the transaction (with its audit row) rolls back.
  await scheduleChange(db, { env: caller.env, providerId: row.provider_id, pls, allowStranded: true, ...opts, audit }, async (trx) => {
    const gone = await trx.deleteFrom('time_off').where('env', '=', caller.env).where('practice_id', '=', caller.practiceId).where('id', '=', id).executeTakeFirst();
    if (gone.numDeletedRows === 0n) throw notFound(`time off ${id} not found`, 'time_off_id');
  });
  return { provider_id: row.provider_id, provider_location_id: row.provider_location_id };
}
