/**
 * The appointment panel (docs/practice-guide.md, "An appointment"): a modal dialog (focus moves in,
 * Escape closes, focus returns to the booking that opened it) with the patient's details, visit
 * reason, booking app and history, and the practice's moves. The API's answer to a refused move is
 * shown in the panel's alert region.
 */
import { act, getAppointment, getCalendar, type Api, type Appointment, type ProviderLocation } from './api.js';
import { statusText } from './calendar.js';
import { $, attr, el, fail, focusOn, human, say } from './dom.js';
import { clock, localDate, when } from './time.js';

/** The provider reason types a practice may cancel with (decision 0014, "One set of rules"). */
export const PROVIDER_REASONS: Record<string, string> = {
  provider_not_available: 'Provider not available',
  rescheduling_patient: 'Rescheduling the patient',
  missing_needed_patient_information: 'Missing patient information',
  payment_or_insurance_issue: 'Payment or insurance issue',
  patient_or_visit_type_not_accepted: 'Patient or visit type not accepted',
  other_provider_reason: 'Other reason',
};

/**
 * Which moves each status offers (docs/api/appointments.md#lifecycle; a practice moves from
 * confirmed, pending_reschedule or rescheduled only, and cancels anything live but a no-show);
 * the API has the last word.
 */
const MOVES: Record<string, string[]> = {
  pending_booking: ['confirm', 'decline', 'cancel'],
  confirmed: ['move', 'cancel', 'arrived', 'no_show'],
  pending_reschedule: ['move', 'cancel', 'arrived'],
  rescheduled: ['move', 'cancel', 'arrived', 'no_show'],
  reschedule_failed: ['cancel', 'arrived', 'no_show'],
  booking_failed: [],
  cancelled: [],
  no_show: ['arrived'],
};
/** A no-show can be recorded from the start time until two days after it (docs/api/appointments.md#arrived-and-no-show). */
const NO_SHOW_WINDOW_MS = 2 * 86_400_000;

/** The moves the panel offers for `a` at `now`: confirm only for manual confirmation, arrived once, no-show in its window. */
export function movesFor(a: Appointment, now = Date.now()): string[] {
  const start = Date.parse(a.start_time);
  return (MOVES[a.appointment_status] ?? []).filter((m) =>
    m === 'confirm' ? a.confirmation_type === 'manual'
      : m === 'arrived' ? !a.arrived
        : m === 'no_show' ? start <= now && now - start <= NO_SHOW_WINDOW_MS
          : true);
}
const ACTOR: Record<string, string> = { client: 'the booking app', user: 'the patient', operator: 'Carebook', service: 'Carebook', staff: 'the practice' };
const DONE: Record<string, string> = {
  confirm: 'Appointment confirmed.', decline: 'Booking declined.', cancel: 'Appointment cancelled.', move: 'Appointment moved.',
  arrived: 'Patient marked arrived.', no_show: 'Patient marked as a no-show.',
};
const LABEL: Record<string, string> = { confirm: 'Confirm', decline: 'Decline', move: 'Move…', cancel: 'Cancel…', arrived: 'Mark arrived', no_show: 'Mark no-show' };

export interface Panel {
  open(a: Appointment, opener: HTMLElement, pl: ProviderLocation): void;
}

/** Sets up the panel; `changed` runs after every successful move (the calendar re-reads). */
export function setupPanel(api: Api, canWrite: boolean, changed: () => Promise<unknown>): Panel {
  const dialog = $<HTMLDialogElement>('appt');
  const alert = $('appt-alert');
  let opener: HTMLElement | undefined;
  let shown: Appointment | undefined;
  let zone = 'UTC';
  let place: ProviderLocation | undefined;

  $('cancel-reason').replaceChildren(...Object.entries(PROVIDER_REASONS).map(([value, label]) => el('option', { value, textContent: label })));
  $('appt-close').addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    const id = shown?.appointment_id;
    shown = undefined;
    // The opener may have been re-rendered; return to the same booking's new button if so.
    const again = id ? document.querySelector<HTMLElement>(`[data-appointment-id="${CSS.escape(id)}"]`) : null;
    (opener?.isConnected ? opener : (again ?? $('cal-range'))).focus();
  });

  const row = (term: string, value: string): Node[] => [el('dt', { textContent: term }), el('dd', { textContent: value })];

  function render(a: Appointment): void {
    shown = a;
    const p = (a.patient ?? {}) as Record<string, unknown>;
    const name = `${String(p.first_name ?? '')} ${String(p.last_name ?? '')}`.trim() || 'Patient';
    $('appt-h').textContent = `${name}, ${when(zone, a.start_time)}`;
    const addr = (p.address ?? p.patient_address) as { address1?: string; city?: string; state?: string; zip_code?: string } | undefined;
    $('appt-details').replaceChildren(
      ...row('Status', statusText(a)),
      ...row('Time', `${when(zone, a.start_time)} – ${clock(zone, a.end_time)}`),
      ...row('Visit reason', a.visit_reason?.name ?? '—'),
      ...row('Patient type', a.patient_type ?? '—'),
      ...row('Booked through', (typeof a.booked_by === 'string' ? a.booked_by : a.booked_by?.name) ?? '—'),
      ...row('Date of birth', String(p.date_of_birth ?? '—')),
      ...row('Phone', String(p.phone_number ?? '—')),
      ...row('E-mail', String(p.email_address ?? '—')),
      ...(addr ? row('Address', [addr.address1, addr.city, addr.state, addr.zip_code].filter(Boolean).join(', ')) : []),
    );
    $('appt-history').replaceChildren(
      ...(a.history?.length ? a.history.map((h) => el('li', { textContent: `${when(zone, h.at)}: ${human(h.action)} (by ${ACTOR[h.actor_kind] ?? h.actor_kind})` })) : [el('li', { textContent: 'No changes yet.' })]),
    );
    const moves = canWrite ? movesFor(a) : [];
    $('appt-actions').replaceChildren(
      ...moves.map((m) => {
        const b = el('button', { type: 'button', className: m === 'cancel' || m === 'decline' ? 'danger' : 'secondary', textContent: LABEL[m]! });
        b.dataset.action = m;
        b.addEventListener('click', () => void choose(m));
        return b;
      }),
    );
    $('appt-cancel').hidden = true;
    $('appt-move').hidden = true;
  }

  async function run(action: string, body: Record<string, unknown> = {}): Promise<void> {
    if (!shown) return;
    alert.textContent = '';
    try {
      const id = shown.appointment_id;
      const after = await act(api, id, action, body);
      render({ ...shown, ...after });
      say(DONE[action] ?? `Appointment ${human(after.appointment_status)}.`);
      // The move's answer has the status only; the appointment's read has the time, arrival and history.
      const full = await getAppointment(api, id);
      if (shown?.appointment_id === id) render(full);
      await changed();
      focusOn($('appt-h'));
    } catch (e) {
      fail(e, alert);
    }
  }

  async function fillSlots(date: string): Promise<void> {
    const select = $<HTMLSelectElement>('move-slot');
    if (!shown) return;
    if (!place) return;
    const r = await getCalendar(api, place, date, date);
    const slots = r.days.find((d) => d.date === date)?.open_slots ?? [];
    // The appointment's own visit reason and patient type keep its length; any open start time otherwise.
    const fit = slots.filter((s) => (!shown?.visit_reason || s.visit_reason_id === shown.visit_reason.id) && (!shown?.patient_type || s.patient_types.includes(shown.patient_type)));
    const free = [...new Map((fit.length ? fit : slots).map((s) => [s.start_time_utc, s])).values()];
    select.replaceChildren(...(free.length ? free.map((s) => el('option', { value: s.start_time, textContent: clock(zone, s.start_time_utc) })) : [el('option', { value: '', textContent: 'No open times this day' })]));
  }

  async function choose(action: string): Promise<void> {
    if (action === 'cancel') {
      $('appt-move').hidden = true;
      $('appt-cancel').hidden = false;
      $('cancel-reason').focus();
    } else if (action === 'move') {
      $('appt-cancel').hidden = true;
      $('appt-move').hidden = false;
      const date = $<HTMLInputElement>('move-date');
      date.value = localDate(zone, shown!.start_time);
      await fillSlots(date.value).catch((e: unknown) => fail(e, alert));
      date.focus();
    } else {
      await run(action);
    }
  }

  $<HTMLInputElement>('move-date').addEventListener('change', (e) => void fillSlots((e.target as HTMLInputElement).value).catch((err: unknown) => fail(err, alert)));
  $<HTMLFormElement>('appt-cancel').addEventListener('submit', (e) => {
    e.preventDefault();
    const type = $<HTMLSelectElement>('cancel-reason').value;
    const note = $<HTMLInputElement>('cancel-note').value.trim();
    void run('cancel', { cancellation_reason_type: type, ...(note && type === 'other_provider_reason' ? { cancellation_reason: note } : {}) });
  });
  $<HTMLFormElement>('appt-move').addEventListener('submit', (e) => {
    e.preventDefault();
    const start = $<HTMLSelectElement>('move-slot').value;
    if (start) void run('move', { start_time: start });
  });

  return {
    open(a, from, pl) {
      opener = from;
      place = pl;
      zone = pl.location.time_zone;
      alert.textContent = '';
      render(a);
      attr(dialog, { 'aria-busy': 'true' });
      if (!dialog.open) dialog.showModal();
      // The list's copy may be short; the appointment's own read has the details and history (and is audited).
      void getAppointment(api, a.appointment_id)
        .then((full) => shown?.appointment_id === full.appointment_id && render(full))
        .catch((e: unknown) => fail(e, alert))
        .finally(() => dialog.removeAttribute('aria-busy'));
    },
  };
}
