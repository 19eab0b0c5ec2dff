/**
 * Dates and times in a location's time zone, with the platform's Intl only (no date library, so the
 * script stays small). A "local date" is `YYYY-MM-DD` on the location's wall calendar.
 */

const parts = (zone: string, instant: number): Record<string, string> => {
  const fmt = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  return Object.fromEntries(fmt.formatToParts(new Date(instant)).map((p) => [p.type, p.value]));
};

/** The local date of an instant in the zone. */
export function localDate(zone: string, instant: number | string): string {
  const p = parts(zone, typeof instant === 'string' ? Date.parse(instant) : instant);
  return `${p.year}-${p.month}-${p.day}`;
}

/** Today's local date in the zone. */
export const today = (zone: string): string => localDate(zone, Date.now());

/** Adds days to a local date (calendar arithmetic, DST-free). */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** ISO weekday of a local date: 1 = Monday … 7 = Sunday. */
export function weekday(date: string): number {
  return ((new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7) + 1;
}

/** The Monday of the week a local date falls in. */
export const weekStart = (date: string): string => addDays(date, 1 - weekday(date));

/** The wall-clock time of an instant in the zone, e.g. `9:30 AM`. */
export function clock(zone: string, instant: string | number): string {
  return new Date(typeof instant === 'string' ? Date.parse(instant) : instant).toLocaleTimeString('en-US', { timeZone: zone, hour: 'numeric', minute: '2-digit' });
}

/** A local date as a heading, e.g. `Thu, Nov 26`. */
export function dayLabel(date: string, opts: Intl.DateTimeFormatOptions = { weekday: 'short', month: 'short', day: 'numeric' }): string {
  return new Date(`${date}T12:00:00Z`).toLocaleDateString('en-US', { ...opts, timeZone: 'UTC' });
}

/** A date and time in the zone, e.g. `Thu, Nov 26, 9:30 AM`. */
export function when(zone: string, instant: string): string {
  return new Date(Date.parse(instant)).toLocaleString('en-US', { timeZone: zone, weekday: 'short', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
}

/** The zone's short name at an instant (e.g. `EST`, `EDT`), for headings. */
export function zoneName(zone: string, instant = Date.now()): string {
  return new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'short' }).formatToParts(new Date(instant)).find((p) => p.type === 'timeZoneName')?.value ?? zone;
}
