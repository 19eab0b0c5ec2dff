/**
 * The practice workspace's browser script (docs/decisions/0014-practice-workspace.md,
 * docs/practice-guide.md): signs in, reads who is signed in, and wires the calendar, the appointment
 * panel, the live event stream, the schedule and (for administrators) the staff views.
 */
import { createApi, getMe, type Api, type Me } from './api.js';
import { currentTokens, handleCallback, signIn, signOut, type AuthConfig } from './auth.js';
import { setupCalendar, type Calendar } from './calendar.js';
import { setupPanel } from './appointment.js';
import { $, all, fail, focusOn, say } from './dom.js';
import { follow } from './live.js';
import { setupSchedule } from './schedule.js';
import { setupStaff } from './staff.js';

const cfg = document.body.dataset as unknown as AuthConfig;
type ViewName = 'calendar' | 'schedule' | 'staff';

function signedOut(message?: string): void {
  signOut();
  for (const v of all<HTMLElement>('.view')) v.hidden = true;
  $('views').hidden = true;
  $('sign-out').hidden = true;
  $('who').textContent = '';
  $('welcome').hidden = false;
  if (message) fail(message);
}

function startViews(api: Api, me: Me): void {
  const isAdmin = me.scopes.includes('practice.admin');
  const canWrite = me.scopes.includes('practice.write');
  $('practice-name').textContent = me.practice.name;
  $('who').textContent = me.user.email;
  $('views').hidden = false;
  $('sign-out').hidden = false;
  (document.querySelector('[data-view="staff"]') as HTMLElement).hidden = !isAdmin;
  if (!canWrite) (document.querySelector('[data-view="schedule"]') as HTMLElement).hidden = true;

  // The panel and the calendar call each other only from event handlers, after both exist.
  const refresh = (): Promise<unknown> => calendar.refresh();
  const panel = setupPanel(api, canWrite, refresh);
  const calendar: Calendar = setupCalendar(api, me, (a, opener) => calendar.current() && panel.open(a, opener, calendar.current()!));
  const schedule = canWrite ? setupSchedule(api, me, () => void refresh().catch(fail)) : undefined;
  const staff = isAdmin ? setupStaff(api, me) : undefined;

  // Live: every event of the practice re-reads the visible range (a new booking shows within a second or two).
  let timer: ReturnType<typeof setTimeout> | undefined;
  follow(
    api,
    () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        void calendar
          .refresh()
          .then((fresh) => fresh.length && say(`${fresh.length} new booking${fresh.length === 1 ? '' : 's'} in the calendar.`))
          .catch(fail);
      }, 150);
    },
    (on) => ($('live-state').textContent = on ? 'Live: updates appear as they happen.' : 'Reconnecting to live updates…'),
  );

  const show = (name: ViewName, focus: boolean): void => {
    const allowed: ViewName = (name === 'staff' && !isAdmin) || (name === 'schedule' && !canWrite) ? 'calendar' : name;
    // A message about the view left behind would read as about this one.
    $('status').textContent = '';
    $('alert').textContent = '';
    for (const v of all<HTMLElement>('.view')) v.hidden = v.id !== allowed;
    for (const a of all<HTMLAnchorElement>('#views a')) {
      if (a.dataset.view === allowed) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    if (allowed === 'calendar') void calendar.refresh().catch(fail);
    if (allowed === 'schedule') void schedule?.load().catch(fail);
    if (allowed === 'staff') void staff?.load().catch(fail);
    if (focus) focusOn($(`${allowed}-h`));
  };
  addEventListener('hashchange', () => show((location.hash.slice(1) || 'calendar') as ViewName, true));
  show((location.hash.slice(1) || 'calendar') as ViewName, false);
}

async function main(): Promise<void> {
  $('sign-in').addEventListener('click', () => void signIn(cfg).catch(fail));
  $('sign-out').addEventListener('click', () => {
    signedOut();
    say('You are signed out.');
    focusOn($('welcome-h'));
  });
  if (location.pathname === '/practice/callback') await handleCallback(cfg);
  const tokens = currentTokens(cfg);
  if (!tokens) {
    $('welcome').hidden = false;
    return;
  }
  const api = createApi(tokens, () => signedOut('Your session has ended. Please sign in again.'));
  startViews(api, await getMe(api));
}

main().catch((e: unknown) => {
  if ($('welcome').hidden && !$('views').hidden) fail(e);
  else signedOut(e instanceof Error ? e.message : String(e));
});
