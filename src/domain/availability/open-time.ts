/**
 * Open time and time off (docs/scheduling.md): when a provider-location is closed by time off, as
 * instants in its own zone, and whether a booked time still lies inside open time (the stranded
 * bookings of a schedule change). Local dates and times become instants through the `LocalClock`
 * (Luxon), so a span or a block across a daylight-saving change has its true length.
 */
import type { PatientType } from '../patient-type.js';
import type { LocalClock } from '../scheduling/local-time.js';
import type { ScheduleData, SlotSource, TimeOffSpan } from '../scheduling/schedule-data.js';

/** `[start, end)` of one time-off span in `zone` (epoch ms): from its start time (or midnight) to its end time (or the next midnight). */
export function timeOffRange(span: TimeOffSpan, zone: string, clock: LocalClock): [number, number] {
  const start = clock.point(zone, span.startDate, span.startMin ?? 0).ms;
  const end = span.endMin === null ? clock.startOfDay(zone, clock.day(span.endDate).next) : clock.point(zone, span.endDate, span.endMin).ms;
  return [start, end];
}

/** The time off of `pl` (its provider's at every location, and its own) as ranges sorted by start; empty when it has none. */
export function timeOffRanges(pl: SlotSource, data: ScheduleData, clock: LocalClock): [number, number][] {
  const spans = data.timeOff.get(pl.providerId);
  if (!spans || spans.length === 0) return [];
  const out: [number, number][] = [];
  for (const s of spans) if (s.providerLocationId === null || s.providerLocationId === pl.id) out.push(timeOffRange(s, pl.timeZone, clock));
  return out.sort((a, b) => a[0] - b[0]);
}

/** True when `[start, end)` overlaps one of `ranges` (sorted by start). */
export function overlapsAny(ranges: [number, number][] | undefined, start: number, end: number): boolean {
  if (!ranges) return false;
  for (const [s, e] of ranges) {
    if (s >= end) return false;
    if (e > start) return true;
  }
  return false;
}

/**
 * Whether a booked time `[startMs, endMs)` lies in `pl`'s open time (docs/scheduling.md, "Stranded
 * bookings"): inside one weekly block of its local day that takes the visit reason and patient type,
 * or at a pushed calendar timeslot's start, and overlapping no time off. Slot alignment is not
 * asked: hours that move by ten minutes do not strand a booking they still cover.
 */
export function isOpenTime(
  pl: SlotSource,
  data: ScheduleData,
  clock: LocalClock,
  t: { startMs: number; endMs: number; visitReasonId: string; patientType: PatientType },
): boolean {
  if (overlapsAny(timeOffRanges(pl, data, clock), t.startMs, t.endMs)) return false;
  const zone = pl.timeZone;
  const date = clock.localDate(zone, t.startMs);
  const weekday = clock.day(date).weekday;
  for (const b of data.blocks.get(pl.id) ?? []) {
    if (b.weekday !== weekday) continue;
    if (b.patientType !== null && b.patientType !== t.patientType) continue;
    if (b.visitReasonIds && !b.visitReasonIds.includes(t.visitReasonId)) continue;
    if (clock.point(zone, date, b.startMin).ms <= t.startMs && t.endMs <= clock.point(zone, date, b.endMin).ms) return true;
  }
  for (const p of data.pushed.get(pl.id) ?? []) {
    if (p.startMs !== t.startMs) continue;
    if (p.patientType !== null && p.patientType !== t.patientType) continue;
    if (p.excluded?.includes(t.visitReasonId)) continue;
    if (p.allowed && p.allowed.length > 0 && !p.allowed.includes(t.visitReasonId)) continue;
    return true;
  }
  return false;
}
