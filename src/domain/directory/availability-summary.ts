/**
 * Availability summaries of provider-locations for directory listings (interface.md §2.4
 * `new_patient_availability` / `existing_patient_availability`, §2.5
 * `first_availability_date_in_provider_local_time`, §8 "Availability horizon" and "Limited
 * availability").
 *
 * Bookable times follow contracts.md §5: weekly schedules split into slots by the visit reason's
 * duration for the patient type, plus calendar timeslots pushed with the calendar PUT, minus the
 * provider's held time (`appointment_holds`, any location). Only times after `now` count.
 *
 * This is computed here, set-based (four queries for any number of provider-locations), because
 * the scheduling area did not yet export a slot computation when the directory was written; it
 * stops walking a provider-location's days as soon as both answers are known, so a page of 10,000
 * entities costs a few days of slots each, not 90.
 */
import { sql, type RawBuilder } from 'kysely';
import { DateTime } from 'luxon';
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';

export type PatientType = 'new' | 'existing';
export type Next28Days = 'none' | 'limited' | 'available';

export interface PatientTypeAvailability {
  /** First bookable start (any visit reason) within 90 days, ISO-8601 UTC; absent when none. */
  next_available_utc?: string;
  /** `limited`: fewer than 20 timeslots (default visit reason) in the next 28 days. */
  next_28_days: Next28Days;
}

export interface AvailabilitySummary {
  new: PatientTypeAvailability;
  existing: PatientTypeAvailability;
  /** Local date (provider's zone) of the first new-patient slot within 90 days. */
  first_availability_date_in_provider_local_time?: string;
  /** The visit reason the `url` of the summary is for (the provider's default). */
  default_visit_reason_id?: string;
}

export const HORIZON_DAYS = 90;
export const LIMITED_WINDOW_DAYS = 28;
export const LIMITED_BELOW = 20;
const DAY_MS = 86_400_000;

interface Block {
  weekday: number;
  startMin: number;
  endMin: number;
  reasons: string[] | null;
  patientType: PatientType | null;
}

interface PushedSlot {
  localDate: string;
  startMin: number;
  startUtc: number;
  allowed: string[] | null;
  excluded: string[] | null;
  patientType: PatientType | null;
}

interface Pl {
  id: string;
  providerId: string;
  locationId: string;
  zone: string;
  reasons: string[];
  defaultReason: string | undefined;
  blocks: Block[];
}

function minutes(hhmm: string): number {
  const [h, m] = hhmm.split(':');
  return Number(h) * 60 + Number(m);
}

function parseBlocks(text: string | null): Block[] {
  if (!text) return [];
  return text.split(';').map((b) => {
    const [wd, start, end, reasons, pt] = b.split('|');
    return {
      weekday: Number(wd),
      startMin: minutes(start!),
      endMin: minutes(end!),
      reasons: reasons ? reasons.split(',') : null,
      patientType: pt === 'new' || pt === 'existing' ? pt : null,
    };
  });
}

/**
 * Local wall-clock → UTC epoch ms, memoised per (zone, date, minute) without building keys (this
 * runs for every block of every provider-location of a 10,000-entity page): DST-correct via luxon.
 */
class LocalClock {
  private readonly cache = new Map<string, Map<string, Map<number, number>>>();
  toUtc(zone: string, date: string, minute: number): number {
    let byDate = this.cache.get(zone);
    if (!byDate) this.cache.set(zone, (byDate = new Map()));
    let byMinute = byDate.get(date);
    if (!byMinute) byDate.set(date, (byMinute = new Map()));
    let v = byMinute.get(minute);
    if (v === undefined) {
      const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
      v = DateTime.fromObject({ year: y, month: mo, day: d, hour: Math.floor(minute / 60), minute: minute % 60 }, { zone }).toMillis();
      byMinute.set(minute, v);
    }
    return v;
  }
  private readonly today = new Map<string, string>();
  todayIn(zone: string, now: Date): string {
    let v = this.today.get(zone);
    if (v === undefined) {
      v = DateTime.fromJSDate(now, { zone }).toISODate() ?? now.toISOString().slice(0, 10);
      this.today.set(zone, v);
    }
    return v;
  }
  private readonly days = new Map<string, { date: string; weekday: number }[]>();
  /** The local dates from the day before `today` to `HORIZON_DAYS` after it, with ISO weekdays. */
  daysFrom(today: string): { date: string; weekday: number }[] {
    let v = this.days.get(today);
    if (!v) {
      const [y, m, d] = today.split('-').map(Number) as [number, number, number];
      v = [];
      for (let i = -1; i <= HORIZON_DAYS; i++) {
        const t = new Date(Date.UTC(y, m - 1, d + i));
        const wd = t.getUTCDay();
        v.push({ date: t.toISOString().slice(0, 10), weekday: wd === 0 ? 7 : wd });
      }
      this.days.set(today, v);
    }
    return v;
  }
}

/** Held intervals of one provider, sorted by start. */
type Holds = [number, number][];

function overlapsHold(holds: Holds | undefined, start: number, end: number): boolean {
  if (!holds) return false;
  for (const [s, e] of holds) {
    if (s >= end) return false;
    if (e > start) return true;
  }
  return false;
}

/** What the computation needs of a provider-location; callers that already query these columns pass them. */
export interface AvailabilityInputRow {
  id: string;
  provider_id: string;
  location_id: string;
  time_zone: string;
  visit_reason_ids: string[];
  default_visit_reason_id: string | null;
  /** `weeklyBlocksSql` of the provider-location. */
  blocks: string | null;
}

/**
 * A provider-location's weekly schedule as one compact text value (one string per row instead of a
 * row per block: 10,000 entities carry ~100,000 blocks). `plAlias` names the `provider_locations` row.
 */
export function weeklyBlocksSql(plAlias: string): RawBuilder<string | null> {
  const pl = sql.table(plAlias);
  return sql<string | null>`(SELECT ${weeklyBlocksAggSql()} FROM weekly_schedules ws WHERE ws.env = ${pl}.env AND ws.provider_location_id = ${pl}.id)`;
}

/** The aggregate behind `weeklyBlocksSql`, over rows of `weekly_schedules ws` (for GROUP BY queries). */
export function weeklyBlocksAggSql(): RawBuilder<string | null> {
  return sql<string | null>`string_agg(ws.weekday || '|' || to_char(ws.start_local, 'HH24:MI') || '|' || to_char(ws.end_local, 'HH24:MI')
      || '|' || coalesce(array_to_string(ws.visit_reason_ids, ','), '') || '|' || coalesce(ws.patient_type, ''), ';')`;
}

/**
 * Availability summaries for `providerLocationIds` (any order, any count), keyed by id. Ids that are
 * unknown or inactive are absent from the map. `rows` may be given instead of ids by a caller that
 * has already read them (active provider-locations only). `now` is injectable for tests.
 */
export async function directoryAvailability(
  db: Db,
  input: { env: Env; providerLocationIds?: string[]; rows?: AvailabilityInputRow[]; now?: Date },
): Promise<Map<string, AvailabilitySummary>> {
  const out = new Map<string, AvailabilitySummary>();
  const now = input.now ?? new Date();
  const nowMs = now.getTime();
  const horizon = new Date(nowMs + HORIZON_DAYS * DAY_MS);
  const env = input.env;

  let rows = input.rows;
  if (!rows) {
    const ids = [...new Set(input.providerLocationIds ?? [])];
    if (ids.length === 0) return out;
    rows = (
      await sql<AvailabilityInputRow>`
        SELECT pl.id, pl.provider_id, pl.location_id, l.time_zone, p.visit_reason_ids, p.default_visit_reason_id,
          ${weeklyBlocksSql('pl')} AS blocks
        FROM provider_locations pl
        JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
        JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
        WHERE pl.env = ${env} AND pl.active AND pl.id = ANY(${ids}::text[])`.execute(db)
    ).rows;
  }
  if (rows.length === 0) return out;

  const pls: Pl[] = rows.map((r) => {
    const reasons = r.visit_reason_ids.length ? r.visit_reason_ids : r.default_visit_reason_id ? [r.default_visit_reason_id] : [];
    return {
      id: r.id,
      providerId: r.provider_id,
      locationId: r.location_id,
      zone: r.time_zone,
      reasons,
      defaultReason: r.default_visit_reason_id ?? reasons[0],
      blocks: parseBlocks(r.blocks),
    };
  });
  const providerIds = [...new Set(pls.map((p) => p.providerId))];

  const [durRows, pushedRows, holdRows] = await Promise.all([
    db.selectFrom('visit_reasons').select(['id', 'duration_new_minutes', 'duration_existing_minutes']).where('env', '=', env).execute(),
    sql<{
      provider_id: string;
      location_id: string;
      local_date: string;
      start_local: string;
      start_utc: Date;
      allowed_visit_reason_ids: string[] | null;
      excluded_visit_reason_ids: string[] | null;
      patient_type: PatientType | null;
    }>`
      SELECT provider_id, location_id, local_date, to_char(start_local, 'HH24:MI') AS start_local, start_utc,
             allowed_visit_reason_ids, excluded_visit_reason_ids, patient_type
      FROM calendar_timeslots
      WHERE env = ${env} AND provider_id = ANY(${providerIds}::text[]) AND start_utc > ${now} AND start_utc < ${horizon}`.execute(db),
    sql<{ provider_id: string; s: Date; e: Date }>`
      SELECT provider_id, lower(during) AS s, upper(during) AS e
      FROM appointment_holds
      WHERE env = ${env} AND provider_id = ANY(${providerIds}::text[]) AND during && tstzrange(${now}, ${horizon})
      ORDER BY provider_id, lower(during)`.execute(db),
  ]);

  const duration = new Map<string, { new: number; existing: number }>();
  for (const r of durRows) duration.set(r.id, { new: r.duration_new_minutes, existing: r.duration_existing_minutes });
  const pushed = new Map<string, PushedSlot[]>();
  for (const r of pushedRows.rows) {
    const key = `${r.provider_id}|${r.location_id}`;
    let list = pushed.get(key);
    if (!list) pushed.set(key, (list = []));
    list.push({
      localDate: String(r.local_date).slice(0, 10),
      startMin: minutes(r.start_local),
      startUtc: new Date(r.start_utc).getTime(),
      allowed: r.allowed_visit_reason_ids,
      excluded: r.excluded_visit_reason_ids,
      patientType: r.patient_type,
    });
  }
  const holds = new Map<string, Holds>();
  for (const r of holdRows.rows) {
    let list = holds.get(r.provider_id);
    if (!list) holds.set(r.provider_id, (list = []));
    list.push([new Date(r.s).getTime(), new Date(r.e).getTime()]);
  }

  const clock = new LocalClock();
  const limitedEnd = nowMs + LIMITED_WINDOW_DAYS * DAY_MS;
  const horizonMs = horizon.getTime();
  // The local date of each patient type's first slot, set by summarise().
  const firstDate: Partial<Record<PatientType, string>> = {};
  for (const pl of pls) {
    delete firstDate.new;
    delete firstDate.existing;
    const summary: AvailabilitySummary = {
      new: summarise(pl, 'new'),
      existing: summarise(pl, 'existing'),
      ...(pl.defaultReason ? { default_visit_reason_id: pl.defaultReason } : {}),
    };
    if (firstDate.new) summary.first_availability_date_in_provider_local_time = firstDate.new;
    out.set(pl.id, summary);
  }
  return out;

  function summarise(pl: Pl, pt: PatientType): PatientTypeAvailability {
    const providerHolds = holds.get(pl.providerId);
    const pushedHere = pushed.get(pl.id) ?? [];
    const blocks = pl.blocks.filter((b) => b.patientType === null || b.patientType === pt);
    if (blocks.length === 0 && pushedHere.length === 0) return { next_28_days: 'none' };
    const durOf = (reason: string): number | undefined => duration.get(reason)?.[pt];
    const today = clock.todayIn(pl.zone, now);
    let earliest: number | undefined;
    let count = 0;
    const free = (start: number, minutesLong: number): boolean =>
      start > nowMs && start < horizonMs && !overlapsHold(providerHolds, start, start + minutesLong * 60_000);

    // The walk starts yesterday so that a zone behind UTC never loses its early local hours.
    for (const { date, weekday } of clock.daysFrom(today)) {
      const dayStart = clock.toUtc(pl.zone, date, 0);
      if (dayStart >= horizonMs) break;
      if (earliest !== undefined && (count >= LIMITED_BELOW || dayStart >= limitedEnd)) break;
      const defaultStarts = new Set<number>();
      let dayEarliest: number | undefined;
      for (const b of blocks) {
        if (b.weekday !== weekday) continue;
        const reasons = b.reasons ? b.reasons.filter((r) => pl.reasons.includes(r)) : pl.reasons;
        const blockStart = clock.toUtc(pl.zone, date, b.startMin);
        const blockEnd = clock.toUtc(pl.zone, date, b.endMin);
        // Slots step in real elapsed time from the block's start to its end, as the availability
        // endpoint does (src/domain/scheduling), so a block spanning a DST change yields real instants.
        for (const reason of reasons) {
          const dur = durOf(reason);
          if (!dur) continue;
          const step = dur * 60_000;
          for (let start = blockStart; start + step <= blockEnd; start += step) {
            if (!free(start, dur)) continue;
            if (dayEarliest === undefined || start < dayEarliest) dayEarliest = start;
            if (reason === pl.defaultReason && start < limitedEnd) defaultStarts.add(start);
            else if (reason !== pl.defaultReason) break; // only the first free start matters for other reasons
          }
        }
      }
      for (const s of pushedHere) {
        if (s.localDate !== date) continue;
        if (s.patientType !== null && s.patientType !== pt) continue;
        for (const reason of pl.reasons) {
          if (s.excluded?.includes(reason)) continue;
          if (s.allowed && !s.allowed.includes(reason)) continue;
          const dur = durOf(reason);
          if (!dur || !free(s.startUtc, dur)) continue;
          if (dayEarliest === undefined || s.startUtc < dayEarliest) dayEarliest = s.startUtc;
          if (reason === pl.defaultReason && s.startUtc < limitedEnd) defaultStarts.add(s.startUtc);
        }
      }
      if (earliest === undefined && dayEarliest !== undefined) {
        earliest = dayEarliest;
        firstDate[pt] = date;
      }
      count += defaultStarts.size;
    }
    const next_28_days: Next28Days = count === 0 ? 'none' : count < LIMITED_BELOW ? 'limited' : 'available';
    return earliest !== undefined ? { next_available_utc: new Date(earliest).toISOString(), next_28_days } : { next_28_days };
  }
}
