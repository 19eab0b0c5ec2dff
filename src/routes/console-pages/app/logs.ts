/**
 * The Request log and Usage views (docs/console.md, "Request log", "Usage"; docs/api/request-log.md):
 * calls made with the sandbox credentials, searchable by `request_id` and status, with paging; requests
 * per day and app as bars (`<meter>` elements: the page's CSP allows no inline styles) with the error
 * rate, the same numbers as a table (with each app's clients), and the rate-limit headroom.
 */
import { $, attr, el, fail, fillTable, formValues, when } from './dom.js';
import type { LoggedRequest, ToolsApi, Usage, UsageDay } from './tools-api.js';

/** A `<meter>` with its value in words for assistive technology. */
function meter(value: number, max: number, label: string, high?: number): HTMLMeterElement {
  const m = el('meter', { min: 0, max: Math.max(max, 1), value, ...(high !== undefined ? { high, optimum: 0 } : {}) });
  return attr(m, { 'aria-label': label });
}

function errorText(r: LoggedRequest): string {
  const errs = (r.error?.errors ?? []) as { code?: string; field?: string; message?: string }[];
  return errs.map((e) => [e.code, e.field, e.message].filter(Boolean).join(' ')).join('; ');
}

/** Wires the Request log view; `load` reads its first page. */
export function setupLogs(tools: ToolsApi): { load(): Promise<void> } {
  const table = $<HTMLTableElement>('rl-table');
  const more = $<HTMLButtonElement>('rl-more');
  let filter: Record<string, string> = {};
  let rows: LoggedRequest[] = [];
  let cursor: string | null = null;
  const page = async (next: boolean): Promise<void> => {
    const res = await tools.requests({ ...filter, ...(next && cursor ? { cursor } : {}) });
    rows = next ? [...rows, ...res.requests] : res.requests;
    cursor = res.next_cursor;
    fillTable(table, ['Time', 'Request', 'Status', 'Latency', 'Client', 'Request id', 'Error'], rows.map((r) => [
      when(r.at), el('code', {}, `${r.method} ${r.path}`), String(r.status), `${Math.round(r.latency_ms)} ms`, el('code', {}, r.client_id), el('code', {}, r.request_id), errorText(r),
    ]), filter.request_id || filter.status ? 'No request matches.' : 'No requests yet.');
    more.hidden = !cursor;
  };
  $<HTMLFormElement>('rl-filter').addEventListener('submit', (ev) => {
    ev.preventDefault();
    filter = formValues(ev.target as HTMLFormElement);
    void page(false).catch((e: unknown) => fail(e));
  });
  more.addEventListener('click', () => void page(true).catch((e: unknown) => fail(e)));
  return { load: () => page(false) };
}

const NO_APP = 'Clients of no app';
const appName = (name: string | null): string => name ?? NO_APP;
const percent = (r: number): string => `${(r * 100).toFixed(1)}%`;

function rate(u: Usage['rate_limit']): HTMLElement[] {
  const label = `${u.used_last_minute} of ${u.per_minute} calls in the last minute; ${u.remaining} left`;
  return [
    el('p', {}, el('strong', {}, `${u.remaining} of ${u.per_minute}`), ' calls a minute left.'),
    el('div', { className: 'bar-row' }, el('span', {}, 'Used'), meter(u.used_last_minute, u.per_minute, label, u.per_minute * 0.8), el('span', {}, String(u.used_last_minute))),
    ...(u.by_app.length ? [el('ul', { className: 'plain', id: 'rate-apps' }, ...u.by_app.map((a) => el('li', {}, el('strong', {}, appName(a.app_name)), `: ${a.requests} in the last minute`)))] : []),
  ];
}

/** The chart: one group per day, one bar per app (its requests) with its error rate. Hidden from assistive technology: the table says the same. */
function chart(days: UsageDay[]): HTMLElement[] {
  if (!days.length) return [el('p', { className: 'muted' }, 'No calls in these days.')];
  const max = Math.max(1, ...days.map((d) => d.requests));
  // One colour per app, in the order the apps first appear.
  const apps = [...new Set(days.map((d) => d.app_id ?? ''))];
  const byDay = new Map<string, UsageDay[]>();
  for (const d of days) byDay.set(d.day, [...(byDay.get(d.day) ?? []), d]);
  return [...byDay].map(([day, rows]) => attr(el('div', { className: 'chart-day' },
    el('h4', {}, day),
    el('ul', { className: 'bars' }, ...rows.map((d) => attr(el('li', { className: `bar-row app-${apps.indexOf(d.app_id ?? '') % 4}` },
      el('span', { className: 'bar-label' }, appName(d.app_name)),
      meter(d.requests, max, `${day}, ${appName(d.app_name)}: ${d.requests} requests`),
      el('span', {}, `${d.requests} req · ${percent(d.error_rate)} errors`)), { 'data-app-id': d.app_id ?? '' })))), { 'data-day': day }));
}

const clientsText = (d: UsageDay): HTMLElement =>
  el('span', {}, ...d.clients.flatMap((c, i) => [...(i ? ['; '] : []), `${c.kind ?? 'client'} `, el('code', {}, c.client_id), `: ${c.requests} (${c.errors} ${c.errors === 1 ? 'error' : 'errors'})`]));

/** Wires the Usage view; `load` reads the last 14 days. */
export function setupUsage(tools: ToolsApi): { load(): Promise<void> } {
  const load = async (): Promise<void> => {
    const u = await tools.usage(14);
    $('rate').replaceChildren(...rate(u.rate_limit));
    $('usage-chart').replaceChildren(...chart(u.days));
    fillTable($<HTMLTableElement>('usage-table'), ['Day', 'App', 'Requests', 'Errors', 'Error rate', 'Clients'], u.days.map((d) => [
      d.day, appName(d.app_name), String(d.requests), String(d.errors), percent(d.error_rate), clientsText(d),
    ]), 'No calls in these days.');
  };
  return { load };
}
