/**
 * A provider's calendar for the practice (docs/decisions/0014-practice-workspace.md, "Live
 * calendar"): per local day in each location's own zone (Luxon through `LocalClock`, so a
 * daylight-saving day has its 23 or 25 hours), the appointments and the open slots. Open slots are
 * `walkSlots` over the same loaded data as the availability endpoint (docs/api/availability.md,
 * "Where bookable times come from"), walked once per patient type, so for a visit reason and patient
 * type they are exactly the start times `/v1` offers. A handful of set-based queries for any window.
 */
import { sql, type Kysely } from 'kysely';
import type { AppointmentStatus, Database } from '../../../db/schema.js';
import { bookingHorizonEndMs, formatSlot, MAX_DURATION_MINUTES, reasonsOf, walkSlots } from '../../availability/slots.js';
import { MAX_SPAN_DAYS } from '../../availability/query-checks.js';
import { invalidFields, notFound, type FieldError } from '../../errors.js';
import type { PatientType } from '../../patient-type.js';
import { isLocalDate, LocalClock, minutesMs, utcIso } from '../../scheduling/local-time.js';
import { loadProviderLocations, loadScheduleData, type ProviderLocationContext } from '../../scheduling/schedule-data.js';
import type { StaffPrincipal } from '../staff-principal.js';
import { requireReadingStaff } from './scope.js';

export interface CalendarQuery {
  provider_id: string;
  provider_location_id?: string | undefined;
  /** First and last local date, inclusive, at most `MAX_SPAN_DAYS` apart. */
  from: string;
  to: string;
}

export interface CalendarAppointment {
  appointment_id: string;
  appointment_status: AppointmentStatus;
  confirmation_type: string;
  start_time: string;
  end_time: string;
  start_time_utc: string;
  end_time_utc: string;
  arrived: boolean;
  visit_reason: { id: string; name: string };
  patient: { first_name: string; last_name: string };
  /** The booking developer's app. */
  booked_by: string;
}

export interface OpenSlot {
  start_time: string;
  start_time_utc: string;
  end_time_utc: string;
  visit_reason_id: string;
  patient_types: PatientType[];
}

export interface CalendarDay {
  date: string;
  appointments: CalendarAppointment[];
  open_slots: OpenSlot[];
}

export interface ProviderLocationCalendar {
  provider_location_id: string;
  location_id: string;
  time_zone: string;
  active: boolean;
  days: CalendarDay[];
}

/** Every error of a calendar query's dates at once (docs/api/errors.md, "Validation"). */
export function calendarQueryErrors(q: Record<string, unknown>, clock = new LocalClock()): FieldError[] {
  const errors: FieldError[] = [];
  const from = typeof q.from === 'string' ? q.from : undefined;
  const to = typeof q.to === 'string' ? q.to : undefined;
  if (from !== undefined && !isLocalDate(from)) errors.push({ field: 'from', message: 'must be a date YYYY-MM-DD' });
  if (to !== undefined && !isLocalDate(to)) errors.push({ field: 'to', message: 'must be a date YYYY-MM-DD' });
  if (from && to && isLocalDate(from) && isLocalDate(to)) {
    if (to < from) errors.push({ field: 'to', message: `must not be before from (${from})` });
    else if (clock.daysBetween(from, to) > MAX_SPAN_DAYS) errors.push({ field: 'to', message: `must be at most ${MAX_SPAN_DAYS} days after from (${from})` });
  }
  return errors;
}

/** The provider's provider-locations in the caller's practice (one of them with `provider_location_id`), or `not_found`. */
async function practiceProviderLocations(db: Kysely<Database>, staff: StaffPrincipal, q: CalendarQuery): Promise<Map<string, ProviderLocationContext>> {
  if (staff.role === 'provider' && staff.providerId !== q.provider_id) throw notFound(`provider ${q.provider_id} not found`, 'provider_id');
  let ids = db
    .selectFrom('provider_locations as pl')
    .innerJoin('providers as p', (j) => j.onRef('p.env', '=', 'pl.env').onRef('p.id', '=', 'pl.provider_id'))
    .select('pl.id')
    .where('pl.env', '=', staff.env)
    .where('p.practice_id', '=', staff.practiceId)
    .where('pl.provider_id', '=', q.provider_id);
  if (q.provider_location_id !== undefined) ids = ids.where('pl.id', '=', q.provider_location_id);
  const rows = await ids.orderBy('pl.id').execute();
  if (rows.length === 0) {
    throw q.provider_location_id !== undefined
      ? notFound(`provider location ${q.provider_location_id} of provider ${q.provider_id} not found`, 'provider_location_id')
      : notFound(`provider ${q.provider_id} not found`, 'provider_id');
  }
  return loadProviderLocations(db, staff.env, rows.map((r) => r.id));
}

/**
 * The calendar of `q.provider_id` (see the module comment): per provider-location of the caller's
 * practice, per local day from `q.from` to `q.to`, the appointments (every status) and open slots.
 */
export async function practiceCalendar(
  db: Kysely<Database>,
  staff: StaffPrincipal,
  q: CalendarQuery,
  opts: { now?: Date; clock?: LocalClock } = {},
): Promise<{ provider_id: string; from: string; to: string; provider_locations: ProviderLocationCalendar[] }> {
  requireReadingStaff(staff);
  const clock = opts.clock ?? new LocalClock();
  const errors = calendarQueryErrors(q as unknown as Record<string, unknown>, clock);
  if (errors.length) throw invalidFields(errors);
  const pls = await practiceProviderLocations(db, staff, q);
  const now = opts.now ?? new Date();
  let minMs = Infinity;
  let maxMs = -Infinity;
  for (const pl of pls.values()) {
    minMs = Math.min(minMs, clock.startOfDay(pl.timeZone, q.from));
    maxMs = Math.max(maxMs, clock.startOfDay(pl.timeZone, clock.day(q.to).next));
  }
  const active = new Map([...pls].filter(([, p]) => p.active));
  const [data, appointments] = await Promise.all([
    loadScheduleData(db, staff.env, active, { fromMs: minMs, toMs: maxMs + minutesMs(MAX_DURATION_MINUTES) }, { withHolds: true, visitReasonIds: reasonsOf(active) }),
    db
      .selectFrom('appointments as a')
      .innerJoin('patients as pa', 'pa.id', 'a.patient_id')
      .innerJoin('visit_reasons as vr', (j) => j.onRef('vr.env', '=', 'a.env').onRef('vr.id', '=', 'a.visit_reason_id'))
      .innerJoin('developers as d', 'd.id', 'a.developer_id')
      .select([
        'a.id', 'a.provider_location_id', 'a.appointment_status', 'a.confirmation_type', 'a.start_time', 'a.end_time', 'a.arrived_at',
        'a.visit_reason_id', 'vr.name as visit_reason_name', 'pa.first_name', 'pa.last_name', 'd.name as developer_name',
      ])
      .where('a.env', '=', staff.env)
      .where('a.practice_id', '=', staff.practiceId)
      .where(sql<boolean>`a.provider_location_id = ANY(${[...pls.keys()]}::text[])`)
      .where('a.start_time', '>=', new Date(minMs))
      .where('a.start_time', '<', new Date(maxMs))
      .orderBy('a.start_time')
      .orderBy('a.id')
      .execute(),
  ]);

  const nowMs = now.getTime();
  const lastStartMs = bookingHorizonEndMs(nowMs);
  const out: ProviderLocationCalendar[] = [];
  for (const pl of pls.values()) {
    const days = new Map<string, CalendarDay>(clock.dates(q.from, q.to).map((date) => [date, { date, appointments: [], open_slots: [] }]));
    if (pl.active) {
      for (const patientType of ['new', 'existing'] as const) {
        for (const day of walkSlots(pl, data, clock, { from: q.from, to: q.to, patientType, nowMs, lastStartMs })) {
          const open = days.get(day.date)!.open_slots;
          for (const s of day.slots) {
            const existing = open.find((o) => o.visit_reason_id === s.visitReasonId && Date.parse(o.start_time_utc) === s.startMs);
            if (existing) existing.patient_types.push(patientType);
            else {
              open.push({
                start_time: formatSlot(clock, pl.timeZone, s).startTime,
                start_time_utc: utcIso(new Date(s.startMs)),
                end_time_utc: utcIso(new Date(s.startMs + minutesMs(s.durationMinutes))),
                visit_reason_id: s.visitReasonId,
                patient_types: [patientType],
              });
            }
          }
        }
      }
      for (const d of days.values()) d.open_slots.sort((a, b) => a.start_time_utc.localeCompare(b.start_time_utc) || (a.visit_reason_id < b.visit_reason_id ? -1 : 1));
    }
    for (const a of appointments) {
      if (a.provider_location_id !== pl.id) continue;
      const day = days.get(clock.localDate(pl.timeZone, a.start_time.getTime()));
      day?.appointments.push({
        appointment_id: a.id,
        appointment_status: a.appointment_status,
        confirmation_type: a.confirmation_type,
        start_time: clock.format(pl.timeZone, a.start_time.getTime()),
        end_time: clock.format(pl.timeZone, a.end_time.getTime()),
        start_time_utc: utcIso(a.start_time),
        end_time_utc: utcIso(a.end_time),
        arrived: a.arrived_at !== null,
        visit_reason: { id: a.visit_reason_id, name: a.visit_reason_name },
        patient: { first_name: a.first_name, last_name: a.last_name },
        booked_by: a.developer_name,
      });
    }
    out.push({ provider_location_id: pl.id, location_id: pl.locationId, time_zone: pl.timeZone, active: pl.active, days: [...days.values()] });
  }
  return { provider_id: q.provider_id, from: q.from, to: q.to, provider_locations: out };
}
