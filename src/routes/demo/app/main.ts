/**
 * The booking demo's browser script: PKCE sign-in, search, availability, booking, listing and
 * cancelling, all through `@carebook/client` with the signed-in patient's token.
 */
import { createCarebookClient, exchangeCode, parseCallback, startAuthorization, unwrap, UserTokenSource, type CarebookClient, type ProviderLocation, type StateCode, type TokenResponse } from '../../../../clients/typescript/src/index.js';

const SCOPE = 'external.appointment.read external.appointment.write offline_access';
const cfg = document.body.dataset as { clientId: string; authUrl: string; redirectUri: string };
const tokenUrl = `${cfg.authUrl}/oauth/token`;
const base = location.origin;
const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

/** Moves keyboard focus to a heading (made focusable for scripts only), e.g. after its content changed. */
function focusHeading(id: string): void {
  const h = $(id);
  h.setAttribute('tabindex', '-1');
  h.focus();
}

function say(message: string): void {
  $('alert').textContent = '';
  $('status').textContent = message;
}
function fail(e: unknown): void {
  $('status').textContent = '';
  $('alert').textContent = e instanceof Error ? e.message : String(e);
}

/** The wall-clock time of an ISO string with offset, as the provider sees it. */
const localTime = (iso: string): string => {
  const d = new Date(`${iso.slice(0, 19)}Z`);
  return d.toLocaleString('en-US', { weekday: 'short', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone: 'UTC' });
};

function saveTokens(t: TokenResponse): void {
  sessionStorage.setItem('carebook.tokens', JSON.stringify(t));
}

async function signIn(): Promise<void> {
  const start = await startAuthorization({ authUrl: cfg.authUrl, clientId: cfg.clientId, redirectUri: cfg.redirectUri, scope: SCOPE, audience: 'DeveloperApiPatient-Sandbox' });
  sessionStorage.setItem('carebook.pkce', JSON.stringify({ verifier: start.verifier, state: start.state }));
  location.assign(start.url);
}

async function handleCallback(): Promise<void> {
  const saved = JSON.parse(sessionStorage.getItem('carebook.pkce') ?? 'null') as { verifier: string; state: string } | null;
  sessionStorage.removeItem('carebook.pkce');
  const callbackUrl = location.href;
  history.replaceState(null, '', '/demo');
  if (!saved) throw new Error('The sign-in was not started here. Please sign in again.');
  const code = parseCallback(callbackUrl, saved.state);
  saveTokens(await exchangeCode({ tokenUrl, clientId: cfg.clientId, code, redirectUri: cfg.redirectUri, verifier: saved.verifier }));
}

let api: CarebookClient;
/** The chosen time, and the button that chose it (focus returns there on "Back"). */
let chosen: { pl: ProviderLocation; start: string; visitReasonId: string; opener: HTMLElement } | undefined;

async function loadSpecialties(): Promise<void> {
  const select = $<HTMLSelectElement>('specialty');
  const options = [el('option', { value: '', textContent: 'Choose a specialty' })];
  for await (const sp of api.specialties({ page_size: 500 })) options.push(el('option', { value: sp.id, textContent: sp.name }));
  select.replaceChildren(...options);
}

async function search(ev: SubmitEvent): Promise<void> {
  ev.preventDefault();
  const zip = $<HTMLInputElement>('zip').value.trim();
  const specialty = $<HTMLSelectElement>('specialty').value;
  say('Searching…');
  const body = await unwrap(api.api.GET('/v1/provider_locations', { params: { query: { zip_code: zip, specialty_id: specialty, page_size: 10 } } }));
  const visitReasonId = body.data.search_parameters.visit_reason_id ?? '';
  const list = $('results');
  list.replaceChildren();
  for (const [i, pl] of body.data.provider_locations.entries()) {
    const loc = pl.location;
    const times = el('ul', { className: 'times', hidden: true, id: `times-${i}` });
    const show = el('button', { type: 'button', className: 'secondary', textContent: 'Show times' });
    show.setAttribute('aria-expanded', 'false');
    show.setAttribute('aria-controls', times.id);
    show.addEventListener('click', () => {
      if (show.getAttribute('aria-expanded') === 'true') {
        times.hidden = true;
        show.setAttribute('aria-expanded', 'false');
        return;
      }
      void showTimes(pl, visitReasonId, times, show).catch(fail);
    });
    const name = pl.provider.full_name ?? `${pl.provider.first_name} ${pl.provider.last_name}`;
    list.append(
      el(
        'li',
        { className: 'card' },
        el('h3', { textContent: name }),
        el('p', { textContent: (pl.provider.specialties ?? []).join(', ') }),
        el('p', { textContent: loc ? `${loc.address1}, ${loc.city}, ${loc.state} ${loc.zip_code} · ${loc.distance_to_patient_mi ?? '?'} mi` : 'Video visit' }),
        show,
        times,
      ),
    );
  }
  say(body.total_count ? `${body.total_count} provider${body.total_count === 1 ? '' : 's'} found near ${zip}.` : `No providers found near ${zip}.`);
}

async function showTimes(pl: ProviderLocation, visitReasonId: string, list: HTMLUListElement, button: HTMLButtonElement): Promise<void> {
  const body = await unwrap(
    api.api.GET('/v1/provider_locations/availability', { params: { query: { provider_location_ids: pl.provider_location_id, visit_reason_id: visitReasonId, patient_type: 'new' } } }),
  );
  const slots = body.data[0]?.timeslots ?? [];
  list.replaceChildren(
    ...(slots.length
      ? slots.slice(0, 12).map((s) => {
          const b = el('button', { type: 'button', textContent: localTime(s.start_time) });
          b.addEventListener('click', () => choose(pl, s.start_time, s.visit_reason_id, b));
          return el('li', {}, b);
        })
      : [el('li', { textContent: 'No times in the next week.' })]),
  );
  list.hidden = false;
  button.setAttribute('aria-expanded', 'true');
  list.setAttribute('aria-label', `Times for ${pl.provider.full_name ?? 'this provider'}`);
}

function choose(pl: ProviderLocation, start: string, visitReasonId: string, opener: HTMLElement): void {
  chosen = { pl, start, visitReasonId, opener };
  $('booking-summary').textContent = `${pl.provider.full_name ?? 'Provider'}, ${localTime(start)} (local time)`;
  $('booking').hidden = false;
  focusHeading('booking-h');
}

async function book(ev: SubmitEvent): Promise<void> {
  ev.preventDefault();
  if (!chosen) return;
  const f = new FormData(ev.target as HTMLFormElement);
  const v = (k: string): string => String(f.get(k) ?? '').trim();
  say('Booking…');
  const res = await unwrap(
    api.api.POST('/v1/appointments', {
      body: {
        appointment_type: 'providers',
        data: {
          start_time: chosen.start,
          visit_reason_id: chosen.visitReasonId,
          provider_location_id: chosen.pl.provider_location_id,
          patient_type: 'new',
          patient: {
            first_name: v('first_name'),
            last_name: v('last_name'),
            date_of_birth: v('date_of_birth'),
            sex_at_birth: v('sex_at_birth') as 'female' | 'male',
            phone_number: v('phone_number'),
            email_address: v('email_address'),
            patient_address: { address1: v('address1'), city: v('city'), state: v('state').toUpperCase() as StateCode, zip_code: v('patient_zip') },
          },
        },
      },
    }),
  );
  $('booking').hidden = true;
  say(`Booked: ${chosen.pl.provider.full_name ?? 'your provider'}, ${localTime(chosen.start)}. Status: ${res.data.appointment_status.replace(/_/g, ' ')}.`);
  chosen = undefined;
  await listAppointments();
  // The form that had focus is hidden: continue at the list that now shows the appointment.
  focusHeading('mine-h');
}

async function listAppointments(): Promise<void> {
  const items: HTMLLIElement[] = [];
  for await (const a of api.appointments({ page_size: 100, sort_direction: 'ascending' })) {
    const cancel = el('button', { type: 'button', className: 'danger', textContent: 'Cancel' });
    cancel.setAttribute('aria-label', `Cancel appointment on ${localTime(a.start_time)}`);
    cancel.addEventListener('click', () =>
      void unwrap(api.api.POST('/v1/appointments/cancel', { body: { appointment_id: a.appointment_id, cancellation_reason_type: 'patient_no_longer_available' } }))
        .then(() => say('Appointment cancelled.'))
        .then(listAppointments)
        // The button is gone with the re-rendered list: keep focus in the list's section.
        .then(() => focusHeading('mine-h'))
        .catch(fail),
    );
    items.push(
      el(
        'li',
        { className: 'card' },
        el('h3', { textContent: localTime(a.start_time) }),
        el('p', {}, el('span', { className: 'badge', textContent: a.appointment_status.replace(/_/g, ' ') })),
        el('p', { textContent: a.provider_location_id }),
        ...(a.appointment_status === 'cancelled' ? [] : [cancel]),
      ),
    );
  }
  $('appointments').replaceChildren(...(items.length ? items : [el('li', { textContent: 'No appointments yet.' })]));
}

async function main(): Promise<void> {
  if (location.pathname === '/demo/callback') await handleCallback();
  const saved = JSON.parse(sessionStorage.getItem('carebook.tokens') ?? 'null') as TokenResponse | null;
  $('sign-in').addEventListener('click', () => void signIn().catch(fail));
  if (!saved) {
    $('welcome').hidden = false;
    return;
  }
  const tokens = new UserTokenSource({ tokenUrl, clientId: cfg.clientId, initial: saved, onRefresh: saveTokens });
  api = createCarebookClient({ baseUrl: base, authUrl: cfg.authUrl, token: tokens });
  $('app').hidden = false;
  $('sign-out').hidden = false;
  $('sign-out').addEventListener('click', () => {
    sessionStorage.removeItem('carebook.tokens');
    location.assign('/demo');
  });
  $<HTMLFormElement>('search').addEventListener('submit', (e) => void search(e).catch(fail));
  $<HTMLFormElement>('book').addEventListener('submit', (e) => void book(e).catch(fail));
  $('cancel-booking').addEventListener('click', () => {
    $('booking').hidden = true;
    if (chosen?.opener.isConnected) chosen.opener.focus();
    else focusHeading('search-h');
  });
  await Promise.all([loadSpecialties(), listAppointments()]);
}

main().catch(fail);
