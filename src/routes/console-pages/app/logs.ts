/**
 * The Request log and Usage views (docs/console.md, "Request log", "Usage"; docs/api/request-log.md):
 * calls made with the sandbox credentials, searchable by `request_id` and status, with paging; requests
 * per day and client as bars (`<meter>` elements: the page's CSP allows no inline styles), the error
 * rate, and the rate-limit headroom.
 */
import { $, attr, el, fail, fillTable, formValues, when } from './dom.js';
import type { LoggedRequest, ToolsApi, Usage } from './tools-api.js';

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

function rate(u: Usage['rate_limit']): HTMLElement[] {
  const label = `${u.used_last_minute} of ${u.per_minute} calls in the last minute; ${u.remaining} left`;
  return [
    el('p', {}, el('strong', {}, `${u.remaining} of ${u.per_minute}`), ' calls a minute left.'),
    el('div', { className: 'bar-row' }, el('span', {}, 'Used'), meter(u.used_last_minute, u.per_minute, label, u.per_minute * 0.8), el('span', {}, String(u.used_last_minute))),
    ...(u.by_client.length ? [el('ul', { className: 'plain' }, ...u.by_client.map((c) => el('li', {}, el('code', {}, c.client_id), `: ${c.requests} in the last minute`)))] : []),
  ];
}

/** Wires the Usage view; `load` reads the last 14 days. */
export function setupUsage(tools: ToolsApi): { load(): Promise<void> } {
  const load = async (): Promise<void> => {
    const u = await tools.usage(14);
    $('rate').replaceChildren(...rate(u.rate_limit));
    const max = Math.max(1, ...u.days.map((d) => d.requests));
    const items = u.days.map((d) => {
      const label = `${d.day}, ${d.client_id}: ${d.requests} requests, ${d.errors} errors`;
      return attr(el('li', { className: 'bar-row' },
        el('span', { className: 'bar-label' }, d.day, el('br'), el('code', {}, d.client_id)),
        meter(d.requests, max, label),
        el('span', {}, `${d.requests} req · ${(d.error_rate * 100).toFixed(1)}% errors`)), { 'data-day': d.day });
    });
    $('usage-days').replaceChildren(...(items.length ? items : [el('li', { className: 'muted' }, 'No calls in these days.')]));
  };
  return { load };
}
