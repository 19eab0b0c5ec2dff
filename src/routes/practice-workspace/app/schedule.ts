/**
 * The schedule view (docs/practice-guide.md, "Hours, time off and settings"): weekly hours per
 * provider-location, time off (one day or a range, whole days or part of them), visit reasons and
 * their lengths (`visit-reasons.ts`) and booking settings.
 * Every change is first sent as a dry run; when it would strand live bookings
 * (docs/decisions/0014-practice-workspace.md, "Schedules") they are listed and the change is saved
 * only when the user confirms.
 */
import { ApiError, type Api, type Me, type TimeOff } from './api.js';
import { $, all, attr, el, fail, focusOn, say } from './dom.js';
import { when } from './time.js';
import { readVisitReasons, renderVisitReasons, type VisitReason } from './visit-reasons.js';

interface Hours { weekday: number; start: string; end: string }
interface Stranded { appointment_id: string; start_time: string; status?: string; reason?: string; note?: string }
/** `GET /practice/v1/provider_locations/{id}/schedule`. */
interface Schedule {
  provider_location_id: string;
  provider_id: string;
  time_zone: string;
  weekly_hours: (Hours & { visit_reason_ids?: string[]; patient_type?: string })[];
  time_off: TimeOff[];
  confirmation_type: 'auto' | 'manual';
  required_fields: string[];
  accepts_booking_requests_from: string[];
  insurance_managed_at_practice: boolean;
  insurance_plan_ids: string[];
  visit_reasons: VisitReason[];
}

/** Why a booking is stranded, in words. */
const WHY: Record<string, string> = {
  outside_open_time: 'outside open hours',
  overlaps_next_booking: 'would run into the next booking',
  visit_reason_not_offered: 'visit reason no longer offered here',
};

const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const enc = encodeURIComponent;

/** Sets up the schedule view for the practice's provider-locations. */
export function setupSchedule(api: Api, me: Me, afterChange: () => void): { load(): Promise<void> } {
  const plSel = $<HTMLSelectElement>('sch-pl');
  plSel.replaceChildren(...me.provider_locations.map((p) => el('option', { value: p.provider_location_id, textContent: `${p.provider.name} — ${p.location.name}` })));
  let schedule: Schedule | undefined;
  let pending: (() => Promise<void>) | undefined;
  const base = (): string => `/practice/v1/provider_locations/${enc(plSel.value)}`;

  function hoursRow(day: number, h: Partial<Hours>, list: HTMLElement): HTMLLIElement {
    const n = list.children.length + 1;
    const id = `h-${day}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const from = el('input', { type: 'time', id: `${id}-s`, value: h.start ?? '09:00', required: true, step: '300' });
    const to = el('input', { type: 'time', id: `${id}-e`, value: h.end ?? '17:00', required: true, step: '300' });
    const li = el('li', { className: 'hours' },
      el('label', { htmlFor: from.id, className: 'sr', textContent: `${DAYS[day - 1]} block ${n} from` }), from,
      el('span', { textContent: '–', className: 'muted' }),
      el('label', { htmlFor: to.id, className: 'sr', textContent: `${DAYS[day - 1]} block ${n} until` }), to);
    const rm = attr(el('button', { type: 'button', className: 'link-danger', textContent: 'Remove' }), { 'aria-label': `Remove ${DAYS[day - 1]} block ${n}` });
    rm.addEventListener('click', () => {
      li.remove();
      list.closest('fieldset')?.querySelector<HTMLButtonElement>('button.add')?.focus();
    });
    li.append(rm);
    li.dataset.weekday = String(day);
    // Blocks limited to visit reasons or a patient type keep those limits (the editor shows times only).
    const extra = h as { visit_reason_ids?: string[]; patient_type?: string };
    if (extra.visit_reason_ids || extra.patient_type) li.dataset.extra = JSON.stringify({ visit_reason_ids: extra.visit_reason_ids, patient_type: extra.patient_type });
    return li;
  }

  function renderHours(s: Schedule): void {
    $('hours-days').replaceChildren(
      ...DAYS.map((name, i) => {
        const day = i + 1;
        const list = el('ul', { className: 'hours-list' });
        for (const h of s.weekly_hours.filter((x) => x.weekday === day)) list.append(hoursRow(day, h, list));
        const add = attr(el('button', { type: 'button', className: 'secondary add', textContent: 'Add hours' }), { 'aria-label': `Add hours on ${name}` });
        add.addEventListener('click', () => {
          const row = hoursRow(day, {}, list);
          list.append(row);
          row.querySelector('input')?.focus();
        });
        return el('fieldset', { className: 'day-hours' }, el('legend', { textContent: name }), list, add);
      }),
    );
  }

  const offText = (o: TimeOff): string =>
    `${o.start_date}${o.start_local ? ` ${o.start_local}` : ''} – ${o.end_date}${o.end_local ? ` ${o.end_local}` : ''}${o.start_local || o.end_local ? '' : ' (whole days)'}${o.provider_location_id ? '' : ', every location'}${o.note ? ` · ${o.note}` : ''}`;

  function renderTimeOff(s: Schedule): void {
    $('off-list').replaceChildren(
      ...(s.time_off.length
        ? s.time_off.map((o) => {
            const rm = attr(el('button', { type: 'button', className: 'danger', textContent: 'Remove' }), { 'aria-label': `Remove time off ${offText(o)}` });
            rm.addEventListener('click', () =>
              void api.call('DELETE', `/practice/v1/time_off/${enc(o.time_off_id)}`).then(() => say('Time off removed.')).then(load).then(afterChange).then(() => focusOn($('off-h'))).catch(fail));
            return el('li', { className: 'card row' }, el('span', { textContent: offText(o) }), rm);
          })
        : [el('li', { textContent: 'No time off planned.' })]),
    );
  }

  function renderSettings(s: Schedule): void {
    $<HTMLSelectElement>('set-confirmation').value = s.confirmation_type;
    for (const box of all<HTMLInputElement>('#settings input[name="accepts"]')) box.checked = s.accepts_booking_requests_from.includes(box.value);
    for (const box of all<HTMLInputElement>('#settings input[name="required"]')) box.checked = s.required_fields.includes(box.value);
    const plans = $<HTMLTextAreaElement>('set-insurance');
    plans.value = s.insurance_plan_ids.join('\n');
    plans.disabled = s.insurance_managed_at_practice;
    $('set-insurance-note').hidden = !s.insurance_managed_at_practice;
  }

  let seq = 0;
  async function load(): Promise<void> {
    if (!plSel.value) return;
    // Only the latest read renders (a slow read of the previously chosen provider-location is dropped).
    const mine = ++seq;
    const read = await api.call<Schedule>('GET', `${base()}/schedule`);
    if (mine !== seq) return;
    schedule = read;
    renderHours(schedule);
    renderTimeOff(schedule);
    renderSettings(schedule);
    renderVisitReasons($('reasons-list'), schedule.visit_reasons);
  }

  /** Dry run first; saves at once when nothing is stranded, else lists the bookings and waits. */
  async function guarded(method: string, path: string, body: Record<string, unknown>, done: string, form: HTMLFormElement): Promise<void> {
    const save = async (allow: boolean): Promise<void> => {
      await api.call(method, path, { ...body, ...(allow ? { allow_stranded: true } : {}) });
      $('stranded').hidden = true;
      pending = undefined;
      say(done);
      await load();
      afterChange();
    };
    let stranded: Stranded[];
    try {
      stranded = (await api.whole<{ stranded: Stranded[] }>(method, path, { ...body, dry_run: true })).stranded;
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 409)) throw e;
      // Refused (a booking arrived since): the error names each stranded appointment.
      const items = ((e.body ?? {}) as { errors?: { message: string }[] }).errors ?? [];
      stranded = items.map((x) => ({ appointment_id: '', start_time: '', note: x.message }));
    }
    if (!stranded.length) return save(false);
    const zone = schedule?.time_zone ?? 'UTC';
    $('stranded-list').replaceChildren(
      ...stranded.map((a) => el('li', {
        textContent: a.note ?? `${when(zone, a.start_time)}${a.status ? ` · ${a.status.replace(/_/g, ' ')}` : ''}${a.reason && WHY[a.reason] ? ` · ${WHY[a.reason]}` : ''}`,
      })),
    );
    pending = () => save(true);
    // Shown right under the form whose change it is about.
    form.after($('stranded'));
    $('stranded').hidden = false;
    focusOn($('stranded-h'));
  }

  $('stranded-save').addEventListener('click', () => void pending?.().catch(fail));
  $('stranded-keep').addEventListener('click', () => {
    pending = undefined;
    $('stranded').hidden = true;
    say('Nothing was changed.');
    focusOn($('schedule-h'));
  });

  $<HTMLFormElement>('hours').addEventListener('submit', (e) => {
    e.preventDefault();
    const weekly_hours = [...all<HTMLLIElement>('#hours-days li.hours')].map((li) => {
      const [s, t] = Array.from(li.querySelectorAll('input'));
      return { weekday: Number(li.dataset.weekday), start: s!.value, end: t!.value, ...(li.dataset.extra ? (JSON.parse(li.dataset.extra) as object) : {}) };
    });
    void guarded('PUT', `${base()}/weekly_hours`, { hours: weekly_hours }, 'Weekly hours saved.', e.target as HTMLFormElement).catch(fail);
  });
  $<HTMLFormElement>('off').addEventListener('submit', (e) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    const v = (k: string): string => String(f.get(k) ?? '').trim();
    const body: Record<string, unknown> = { provider_id: schedule?.provider_id, start_date: v('start_date'), end_date: v('end_date') || v('start_date') };
    if (v('scope') === 'location') body.provider_location_id = plSel.value;
    if (v('start_local')) body.start_local = v('start_local');
    if (v('end_local')) body.end_local = v('end_local');
    if (v('note')) body.note = v('note');
    void guarded('POST', '/practice/v1/time_off', body, 'Time off added.', form)
      .then(() => form.reset())
      .catch(fail);
  });
  $<HTMLFormElement>('reasons').addEventListener('submit', (e) => {
    e.preventDefault();
    void guarded('PUT', `${base()}/visit_reasons`, { visit_reasons: readVisitReasons() }, 'Visit reasons saved.', e.target as HTMLFormElement).catch(fail);
  });
  const shownRequired = (): string[] => [...all<HTMLInputElement>('#settings input[name="required"]')].map((b) => b.value);
  $<HTMLFormElement>('settings').addEventListener('submit', (e) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const plans = String(f.get('insurance') ?? '').split(/[\s,]+/).filter(Boolean);
    void api
      .call('PATCH', `${base()}/settings`, {
        confirmation_type: f.get('confirmation_type'),
        // Required fields the form has no box for are kept as they are.
        required_fields: [...(schedule?.required_fields ?? []).filter((x) => !shownRequired().includes(x)), ...f.getAll('required').map(String)],
        accepts_booking_requests_from: f.getAll('accepts').map(String),
        ...(schedule?.insurance_managed_at_practice ? {} : { insurance_plan_ids: plans }),
      })
      .then(() => say('Settings saved.'))
      .then(load)
      .catch(fail);
  });
  plSel.addEventListener('change', () => {
    $('stranded').hidden = true;
    void load().catch(fail);
  });
  $<HTMLFormElement>('sch-controls').addEventListener('submit', (e) => e.preventDefault());
  return { load };
}
