/**
 * Provider calendar timeslots (docs/api/README.md#operations, docs/api/calendar.md#access, docs/api/calendar.md): read one provider's
 * pushed slots for a local date with cursor pagination, and replace all of them for that date.
 *
 * Access: a machine-to-machine credential for providers in its developer's directory, or a provider
 * user for their own provider; nobody else. Local date-times are stored with their IANA zone and
 * their instant (Luxon); a local time that does not exist in the zone (a daylight-saving gap) is
 * refused, an ambiguous one (the repeated hour) is the first occurrence.
 */
import { sql, type Kysely } from 'kysely';
import { DateTime } from 'luxon';
import type { Database, Env } from '../../db/schema.js';
import { invalidFields, invalidInput, forbidden, notFound, type FieldError } from '../errors.js';
import { prefixedId } from '../../lib/ids.js';
import type { Principal } from '../credentials/principal.js';
import { isIanaZone, isLocalDate, utcIso } from './local-time.js';

export const MAX_SLOTS_PER_PUT = 1500;

export interface CalendarSlotInput {
  provider_id: string;
  location_id: string;
  start_time: string;
  time_zone: string;
  allowed_visit_reason_ids?: string[];
  excluded_visit_reason_ids?: string[];
  patient_type?: 'new' | 'existing';
}

export interface CalendarSlot {
  timeslot_id: string;
  created_utc: string;
  provider_id: string;
  location_id: string;
  start_time: string;
  time_zone: string;
  allowed_visit_reason_ids: string[];
  excluded_visit_reason_ids: string[];
  patient_type?: 'new' | 'existing';
}

/**
 * The locations of `providerId` the caller may manage (docs/api/calendar.md#access); `not_found`
 * when a machine credential's directory does not hold the provider, `forbidden` for another provider's user.
 */
export async function calendarLocations(db: Kysely<Database>, principal: Principal, providerId: string): Promise<Set<string>> {
  if (principal.kind === 'user') {
    if (principal.role !== 'provider' || principal.providerId !== providerId) {
      throw forbidden(undefined, 'a provider user may only manage their own calendar');
    }
    const rows = await db.selectFrom('provider_locations').select('location_id').where('env', '=', principal.env).where('provider_id', '=', providerId).execute();
    if (rows.length === 0) throw notFound(`provider ${providerId} not found`, 'provider_id');
    return new Set(rows.map((r) => r.location_id));
  }
  if (principal.kind !== 'client') throw forbidden(undefined, 'calendar access needs a machine credential or the provider\'s own user');
  const rows = await db
    .selectFrom('developer_provider_locations as dpl')
    .innerJoin('provider_locations as pl', (j) => j.onRef('pl.env', '=', 'dpl.env').onRef('pl.id', '=', 'dpl.provider_location_id'))
    .select('pl.location_id')
    .where('dpl.env', '=', principal.env)
    .where('dpl.developer_id', '=', principal.developerId)
    .where('pl.provider_id', '=', providerId)
    .execute();
  if (rows.length === 0) throw notFound(`provider ${providerId} not found in your directory`, 'provider_id');
  return new Set(rows.map((r) => r.location_id));
}

function encodeCursor(startLocal: string, id: string): string {
  return Buffer.from(JSON.stringify([startLocal, id])).toString('base64url');
}

function decodeCursor(token: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') return [v[0], v[1]];
  } catch {
    // fall through
  }
  throw invalidInput('next_page_token', 'is not a token this endpoint issued');
}

const localIso = (pgTimestamp: string) => pgTimestamp.replace(' ', 'T').slice(0, 19);

/** One page of a provider's slots on local `date`, ordered by start time. */
export async function readCalendar(
  db: Kysely<Database>,
  env: Env,
  input: { providerId: string; date: string; limit: number; nextPageToken?: string; locationIds: Set<string> },
): Promise<{ slots: CalendarSlot[]; nextPageToken: string | null }> {
  let q = db
    .selectFrom('calendar_timeslots')
    .selectAll()
    .where('env', '=', env)
    .where('provider_id', '=', input.providerId)
    .where('local_date', '=', input.date)
    .where('location_id', 'in', [...input.locationIds]);
  if (input.nextPageToken) {
    const [s, id] = decodeCursor(input.nextPageToken);
    q = q.where(sql<boolean>`(start_local, id) > (${s}::timestamp, ${id})`);
  }
  const rows = await q.orderBy('start_local').orderBy('id').limit(input.limit + 1).execute();
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  return {
    slots: page.map((r) => ({
      timeslot_id: r.id,
      created_utc: utcIso(new Date(r.created_at)),
      provider_id: r.provider_id,
      location_id: r.location_id,
      start_time: localIso(String(r.start_local)),
      time_zone: r.time_zone,
      allowed_visit_reason_ids: r.allowed_visit_reason_ids ?? [],
      excluded_visit_reason_ids: r.excluded_visit_reason_ids ?? [],
      ...(r.patient_type ? { patient_type: r.patient_type } : {}),
    })),
    nextPageToken: rows.length > input.limit && last ? encodeCursor(String(last.start_local), last.id) : null,
  };
}

/**
 * Every error of a calendar push a schema cannot find (docs/api/errors.md, "Validation"): the date's
 * form and, per slot, the provider id, the local start's form, date and existence in its zone, and
 * the zone. Takes any value for `slots` (a slot or field of the wrong type is skipped: the schema
 * names it), so it also serves a body the schema refused.
 */
export function calendarPushErrors(input: { providerId: string; date: unknown; slots: unknown }): FieldError[] {
  const errors: FieldError[] = [];
  const dateText = typeof input.date === 'string' ? input.date : undefined;
  if (dateText !== undefined && !isLocalDate(dateText)) errors.push({ field: 'date', message: 'must be a date YYYY-MM-DD' });
  // A slot's date is compared with a valid date only.
  const date = dateText !== undefined && isLocalDate(dateText) ? dateText : undefined;
  if (!Array.isArray(input.slots)) return errors;
  (input.slots as unknown[]).forEach((slot, i) => {
    if (slot === null || typeof slot !== 'object') return;
    const s = slot as Record<string, unknown>;
    const f = (field: string, message: string) => errors.push({ field: `timeslots[${i}].${field}`, message });
    if (typeof s.provider_id === 'string' && s.provider_id !== input.providerId) f('provider_id', 'must match the provider id of the path');
    const zone = typeof s.time_zone === 'string' ? s.time_zone : undefined;
    const zoneOk = zone !== undefined && isIanaZone(zone);
    if (zone !== undefined && !zoneOk) f('time_zone', 'must be an IANA time zone id');
    if (typeof s.start_time !== 'string') return;
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(s.start_time)) return f('start_time', 'must be an ISO-8601 local date-time without offset');
    if (date !== undefined && s.start_time.slice(0, 10) !== date) return f('start_time', 'date part must match the date parameter');
    const local = DateTime.fromISO(s.start_time, { zone: 'UTC' });
    if (!local.isValid) return f('start_time', 'is not a valid date-time');
    if (!zoneOk) return;
    const inZone = DateTime.fromISO(s.start_time, { zone });
    if (inZone.hour !== local.hour || inZone.minute !== local.minute) f('start_time', `does not exist in ${zone} (daylight-saving gap)`);
  });
  return errors;
}

/**
 * Replaces every slot of `providerId` on local `date` with `slots` (an empty list erases them).
 * Slots at locations the caller may not manage are skipped and their ids reported. A push with any
 * error (`calendarPushErrors`) changes nothing: `invalid` naming every bad field.
 */
export async function replaceCalendar(
  db: Kysely<Database>,
  env: Env,
  input: { providerId: string; date: string; slots: CalendarSlotInput[]; locationIds: Set<string> },
): Promise<{ notFoundLocationIds: string[] }> {
  if (input.slots.length > MAX_SLOTS_PER_PUT) throw invalidInput('timeslots', `at most ${MAX_SLOTS_PER_PUT} timeslots`);
  const errors = calendarPushErrors(input);
  const notFoundIds = new Set<string>();
  const rows: { id: string; env: Env; provider_id: string; location_id: string; local_date: string; start_local: string; time_zone: string; start_utc: Date; allowed_visit_reason_ids: string[] | null; excluded_visit_reason_ids: string[] | null; patient_type: 'new' | 'existing' | null }[] = [];
  const seen = new Set<string>();
  if (!errors.length) {
    for (const s of input.slots) {
      if (!input.locationIds.has(s.location_id)) {
        notFoundIds.add(s.location_id);
        continue;
      }
      const local = DateTime.fromISO(s.start_time, { zone: 'UTC' });
      const startLocal = local.toFormat("yyyy-MM-dd'T'HH:mm:ss");
      const key = `${s.location_id}|${startLocal}`;
      if (seen.has(key)) continue;
      seen.add(key);
      rows.push({
        id: prefixedId('ts'),
        env,
        provider_id: s.provider_id,
        location_id: s.location_id,
        local_date: input.date,
        start_local: startLocal,
        time_zone: s.time_zone,
        start_utc: DateTime.fromISO(s.start_time, { zone: s.time_zone }).toJSDate(),
        allowed_visit_reason_ids: s.allowed_visit_reason_ids?.length ? s.allowed_visit_reason_ids : null,
        excluded_visit_reason_ids: s.excluded_visit_reason_ids?.length ? s.excluded_visit_reason_ids : null,
        patient_type: s.patient_type ?? null,
      });
    }
  }
  if (errors.length) throw invalidFields(errors);
  await db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('calendar_timeslots')
      .where('env', '=', env)
      .where('provider_id', '=', input.providerId)
      .where('local_date', '=', input.date)
      .where('location_id', 'in', [...input.locationIds])
      .execute();
    for (let i = 0; i < rows.length; i += 500) await trx.insertInto('calendar_timeslots').values(rows.slice(i, i + 500)).execute();
  });
  return { notFoundLocationIds: [...notFoundIds] };
}
