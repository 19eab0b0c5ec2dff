/**
 * The calendar view (docs/practice-guide.md, "The calendar"): a provider and location picker, day and
 * week views in the location's time zone with open slots, bookings with their status and time off.
 * The week is a list of days: seven columns on a wide screen, one column on a phone (app.css).
 */
import { getCalendar, type Api, type Appointment, type CalendarRange, type Me, type ProviderLocation } from './api.js';
import { $, all, attr, el, fail, human } from './dom.js';
import { addDays, clock, dayLabel, today, weekStart, zoneName } from './time.js';

export interface Calendar {
  /** The provider-location shown. */
  current(): ProviderLocation | undefined;
  /** Re-reads the visible range; resolves with the ids of bookings that were not shown before. */
  refresh(): Promise<string[]>;
  /** The appointments last shown (for the panel's "move"). */
  shown(): Appointment[];
}

type View = 'day' | 'week';

/** Sets up the calendar view; `open` shows an appointment's panel. */
export function setupCalendar(api: Api, me: Me, open: (a: Appointment, opener: HTMLElement) => void): Calendar {
  const providerSel = $<HTMLSelectElement>('cal-provider');
  const locationSel = $<HTMLSelectElement>('cal-location');
  const pls = me.provider_locations;
  const providers = [...new Map(pls.map((p) => [p.provider.id, p.provider.name])).entries()].sort((a, b) => a[1].localeCompare(b[1]));
  providerSel.replaceChildren(...providers.map(([id, name]) => el('option', { value: id, textContent: name })));
  let view: View = matchMedia('(max-width: 40rem)').matches ? 'day' : 'week';
  let anchor = '';
  let data: CalendarRange | undefined;
  let seq = 0;

  const fillLocations = (): void => {
    const keep = locationSel.value;
    const mine = pls.filter((p) => p.provider.id === providerSel.value);
    locationSel.replaceChildren(...mine.map((p) => el('option', { value: p.provider_location_id, textContent: p.location.name })));
    if (mine.some((p) => p.provider_location_id === keep)) locationSel.value = keep;
  };
  const current = (): ProviderLocation | undefined => pls.find((p) => p.provider_location_id === locationSel.value);
  const zone = (): string => current()?.location.time_zone ?? 'UTC';
  const range = (): [string, string] => (view === 'day' ? [anchor, anchor] : [weekStart(anchor), addDays(weekStart(anchor), 6)]);

  function item(cls: string, ...children: (Node | string)[]): HTMLLIElement {
    return el('li', { className: `item ${cls}` }, ...children);
  }

  /** `HH:MM` as the calendar shows times, e.g. `9:30 AM`. */
  const wall = (hhmm: string): string => {
    const [h, m] = hhmm.split(':').map(Number) as [number, number];
    return `${((h + 11) % 12) + 1}:${String(m).padStart(2, '0')} ${h < 12 ? 'AM' : 'PM'}`;
  };

  function dayItems(date: string, r: CalendarRange): HTMLLIElement[] {
    const z = zone();
    const day = r.days.find((d) => d.date === date) ?? { date, appointments: [], open_slots: [] };
    const rows: { at: number; node: HTMLLIElement }[] = [];
    for (const off of r.time_off) {
      if (date < off.start_date || date > off.end_date) continue;
      const from = date === off.start_date && off.start_local ? off.start_local : null;
      const to = date === off.end_date && off.end_local ? off.end_local : null;
      const span = !from && !to ? 'All day' : `${from ? wall(from) : 'Start of day'} – ${to ? wall(to) : 'end of day'}`;
      rows.push({ at: from ? Date.parse(`${date}T${from}:00Z`) - 86_400_000 : -Infinity, node: item('off', el('span', { className: 'time', textContent: span }), ` Time off${off.note ? `: ${off.note}` : ''}`) });
    }
    for (const a of day.appointments) {
      const name = patientName(a);
      const b = el('button', { type: 'button', className: `appt ${a.appointment_status}` },
        el('span', { className: 'time', textContent: clock(z, a.start_time) }), ` ${name} `, el('span', { className: 'badge', textContent: statusText(a) }));
      attr(b, { 'aria-label': `${clock(z, a.start_time)}, ${name}, ${statusText(a)}${a.visit_reason ? `, ${a.visit_reason.name}` : ''}`, 'aria-haspopup': 'dialog', 'data-appointment-id': a.appointment_id });
      b.addEventListener('click', () => open(a, b));
      rows.push({ at: Date.parse(a.start_time), node: item('booking', b) });
    }
    // One entry per open start time (a slot is offered per visit reason and patient type).
    const free = [...new Map(day.open_slots.map((s) => [s.start_time_utc, s])).values()];
    if (view === 'day') {
      for (const s of free) rows.push({ at: Date.parse(s.start_time_utc), node: item('open', el('span', { className: 'time', textContent: clock(z, s.start_time_utc) }), ' open') });
    } else if (free.length) {
      rows.push({ at: Date.parse(free[0]!.start_time_utc) - 1, node: item('open summary', `${free.length} open from ${clock(z, free[0]!.start_time_utc)}`) });
    }
    rows.sort((x, y) => x.at - y.at);
    return rows.length ? rows.map((x) => x.node) : [item('none', 'Nothing scheduled')];
  }

  function render(): void {
    const box = $('cal-days');
    const pl = current();
    if (!pl || !data) {
      box.replaceChildren(el('p', { textContent: pls.length ? 'Loading…' : 'Your practice has no provider-locations yet.' }));
      return;
    }
    const [start, end] = range();
    $('cal-range').textContent = `${view === 'day' ? dayLabel(start, { weekday: 'long', month: 'long', day: 'numeric', year: 'numeric' }) : `${dayLabel(start)} – ${dayLabel(end)}`} · ${pl.provider.name}, ${pl.location.name} (${zoneName(zone())})`;
    const days: HTMLElement[] = [];
    for (let d = start; d <= end; d = addDays(d, 1)) {
      const heading = view === 'week'
        ? el('h3', {}, attr(el('button', { type: 'button', className: 'day-link', textContent: dayLabel(d) }), { 'aria-label': `${dayLabel(d, { weekday: 'long', month: 'long', day: 'numeric' })}: open the day` }))
        : el('h3', { textContent: dayLabel(d, { weekday: 'long', month: 'short', day: 'numeric' }) });
      heading.querySelector('button')?.addEventListener('click', () => {
        anchor = d;
        setView('day');
      });
      const day = d;
      days.push(attr(el('section', { className: `day${day === today(zone()) ? ' today' : ''}` }, heading, attr(el('ul', { className: 'items' }, ...dayItems(day, data)), { 'aria-label': dayLabel(day, { weekday: 'long', month: 'long', day: 'numeric' }) })), { 'aria-label': dayLabel(day, { weekday: 'long', month: 'long', day: 'numeric' }), 'data-date': day }));
    }
    box.className = `days ${view}`;
    box.replaceChildren(...days);
  }

  async function refresh(): Promise<string[]> {
    const pl = current();
    if (!pl) return [];
    const mine = ++seq;
    const [start, end] = range();
    const before = new Set(data?.days.flatMap((d) => d.appointments).map((a) => a.appointment_id));
    const next = await getCalendar(api, pl, start, end);
    if (mine !== seq) return [];
    const fresh = data ? next.days.flatMap((d) => d.appointments).filter((a) => !before.has(a.appointment_id)).map((a) => a.appointment_id) : [];
    data = next;
    render();
    return fresh;
  }
  const reload = (): void => void refresh().catch(fail);

  function setView(v: View): void {
    view = v;
    for (const r of all<HTMLInputElement>('input[name="cal-view"]')) r.checked = r.value === v;
    data = undefined;
    reload();
  }

  providerSel.addEventListener('change', () => {
    $('status').textContent = '';
    fillLocations();
    data = undefined;
    reload();
  });
  locationSel.addEventListener('change', () => {
    data = undefined;
    reload();
  });
  for (const r of all<HTMLInputElement>('input[name="cal-view"]')) r.addEventListener('change', () => r.checked && setView(r.value as View));
  const step = (sign: number) => () => {
    anchor = addDays(anchor, sign * (view === 'day' ? 1 : 7));
    reload();
  };
  $('cal-prev').addEventListener('click', step(-1));
  $('cal-next').addEventListener('click', step(1));
  $('cal-today').addEventListener('click', () => {
    anchor = today(zone());
    reload();
  });
  $<HTMLFormElement>('cal-controls').addEventListener('submit', (e) => e.preventDefault());

  fillLocations();
  anchor = today(zone());
  for (const r of all<HTMLInputElement>('input[name="cal-view"]')) r.checked = r.value === view;
  render();
  return { current, refresh, shown: () => data?.days.flatMap((d) => d.appointments) ?? [] };
}

/** The status as the calendar shows it (an arrived patient says so). */
export const statusText = (a: Appointment): string => (a.arrived ? `${human(a.appointment_status)}, arrived` : human(a.appointment_status));

/** The patient's name as the calendar shows it. */
export function patientName(a: Appointment): string {
  const p = a.patient as { first_name?: string; last_name?: string } | null | undefined;
  return p?.first_name || p?.last_name ? `${p.first_name ?? ''} ${p.last_name ?? ''}`.trim() : 'Patient';
}
