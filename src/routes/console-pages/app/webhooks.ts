/**
 * The Webhooks view (docs/console.md, "Webhooks"; docs/api/webhooks.md): the receiver and its key
 * (a generated key shown once), a signed test event with the receiver's answer, the delivery log with
 * filters, paging and replay, and how to check a signature (recipes.ts).
 */
import { $, attr, el, fail, fillTable, focusOn, formValues, markInvalid, say, when } from './dom.js';
import { setupRecipes } from './recipes.js';
import type { Answer, Delivery, ToolsApi } from './tools-api.js';

/** The receiver's answer in words. */
export function answerText(a: Answer): string {
  if (a.answer_withheld) return `Status ${a.status_code ?? '—'} in ${a.latency_ms} ms (the answer of a private address is not shown).`;
  const head = a.status_code === null ? `No answer after ${a.latency_ms} ms` : `Status ${a.status_code} in ${a.latency_ms} ms`;
  return `${head}${a.error ? `: ${a.error}` : ''}.`;
}

function keyCard(key: string): HTMLElement {
  const input = attr(el('input', { id: 'rx-key-value', value: key, readOnly: true, className: 'mono', spellcheck: false }), { 'aria-describedby': 'rx-key-note', autocomplete: 'off' });
  const card = el('section', { className: 'card secret' }, el('h3', {}, 'Your signing key'), el('label', { htmlFor: 'rx-key-value' }, 'Signing key'), el('div', { className: 'copy-row' }, input),
    el('p', { id: 'rx-key-note', className: 'once' }, el('strong', {}, 'Shown once. '), 'Keep it with your receiver: it checks each signature with it. Save the receiver again to change it.'));
  queueMicrotask(() => focusOn(card));
  return card;
}

/** Wires the Webhooks view; `load` reads the receiver and the log's first page. */
export function setupWebhooks(tools: ToolsApi, developerId: string): { load(): Promise<void> } {
  $('webhooks-dev').textContent = `Sandbox developer ${developerId}.`;
  setupRecipes();
  const table = $<HTMLTableElement>('dl-table');
  const more = $<HTMLButtonElement>('dl-more');
  let filter: Record<string, string> = {};
  let rows: Delivery[] = [];
  let cursor: string | null = null;

  const replayButton = (d: Delivery): HTMLElement => {
    const b = attr(el('button', { type: 'button', className: 'secondary small' }, 'Replay'), { 'aria-label': `Replay ${d.event_id}` });
    b.addEventListener('click', () => void tools.replay(d.event_id).then(() => say(`Event ${d.event_id} will be sent again.`)).catch((e: unknown) => fail(e)));
    return b;
  };
  const render = (): void => {
    fillTable(table, ['Time', 'Event', 'Appointment', 'Update', 'Attempt', 'Status', 'Latency', 'Error', 'Answer', ''], rows.map((d) => [
      when(d.attempted_at), el('code', {}, d.event_id), d.appointment_id ? el('code', {}, d.appointment_id) : d.event_kind, d.update_type ?? '—', String(d.attempt),
      `${d.status_code ?? '—'} (${d.event_status})`, `${d.latency_ms} ms`, d.error ?? '', d.answer_withheld ? 'withheld' : el('code', {}, d.response_excerpt ?? ''), replayButton(d),
    ]), 'No deliveries yet.');
    more.hidden = !cursor;
  };
  const page = async (next: boolean): Promise<void> => {
    const res = await tools.deliveries({ ...filter, ...(next && cursor ? { cursor } : {}) });
    rows = next ? [...rows, ...res.deliveries] : res.deliveries;
    cursor = res.next_cursor;
    render();
  };

  const load = async (): Promise<void> => {
    const rx = await tools.receiver();
    $('rx-state').textContent = rx ? `Sending to ${rx.url} (set ${when(rx.updated_at)}).${rx.previous_key_expires_at ? ` The previous key also signs until ${when(rx.previous_key_expires_at)}.` : ''}` : 'No receiver yet.';
    if (rx && !$<HTMLInputElement>('rx-url').value) $<HTMLInputElement>('rx-url').value = rx.url;
    await page(false);
  };

  const form = $<HTMLFormElement>('rx-form');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const url = $<HTMLInputElement>('rx-url');
    const key = $<HTMLInputElement>('rx-key');
    markInvalid(url, !url.value.trim());
    if (!url.value.trim()) {
      fail('url: Enter the address of your receiver.');
      url.focus();
      return;
    }
    void tools.setReceiver({ url: url.value.trim(), ...(key.value.trim() ? { key: key.value.trim() } : {}) })
      .then(async (res) => {
        key.value = '';
        $('rx-key-once').replaceChildren(...(res.generated_key ? [keyCard(res.generated_key)] : []));
        say('Receiver saved.');
        await load();
      })
      .catch((e: unknown) => fail(e));
  });
  $('rx-test').addEventListener('click', () => {
    void tools.sendTest()
      .then(async (res) => {
        const out = el('div', { className: `card ${res.delivered ? 'good' : 'bad'}` }, el('h3', {}, res.delivered ? 'Test event delivered' : 'Test event not delivered'), el('p', {}, answerText(res)));
        if (!res.answer_withheld && res.response_excerpt) out.append(el('p', {}, 'Answer: ', el('code', {}, res.response_excerpt)));
        $('rx-answer').replaceChildren(attr(out, { 'data-event-id': res.event_id }));
        await page(false);
      })
      .catch((e: unknown) => fail(e));
  });
  $<HTMLFormElement>('dl-filter').addEventListener('submit', (ev) => {
    ev.preventDefault();
    filter = formValues(ev.target as HTMLFormElement);
    void page(false).catch((e: unknown) => fail(e));
  });
  more.addEventListener('click', () => void page(true).catch((e: unknown) => fail(e)));
  $<HTMLFormElement>('rf-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const since = $<HTMLInputElement>('rf-since');
    const at = since.value ? new Date(since.value) : null;
    markInvalid(since, !at || Number.isNaN(at.getTime()));
    if (!at || Number.isNaN(at.getTime())) {
      fail('since: Enter a date and time.');
      since.focus();
      return;
    }
    void tools.replayFailed(at.toISOString()).then((r) => say(`${r.replayed} failed ${r.replayed === 1 ? 'event' : 'events'} will be sent again.`)).catch((e: unknown) => fail(e));
  });
  return { load };
}
