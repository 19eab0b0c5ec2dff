/**
 * The Sandbox view (docs/console.md, "Sandbox tools"; docs/api/sandbox.md): the fixtures with a Run
 * button each and what the run booked, and a reset after a confirmation that answers how much went.
 */
import { $, attr, confirmAction, details, el, fail, say, when } from './dom.js';
import type { Fixture, ToolsApi } from './tools-api.js';

const COUNT_NAMES: Record<string, string> = {
  appointments: 'Appointments', patients: 'Patients', holds: 'Holds', attachments: 'Attachments', outbox_events: 'Webhook events',
  webhook_deliveries: 'Webhook deliveries', idempotency_keys: 'Idempotency-Key records', request_log: 'Logged requests',
};

/** Wires the Sandbox view; `load` reads the fixtures. */
export function setupSandbox(tools: ToolsApi): { load(): Promise<void> } {
  const item = (f: Fixture): HTMLElement => {
    const result = attr(el('p', { className: 'fx-result' }), { role: 'status' });
    const error = attr(el('p', { className: 'inline-alert' }), { role: 'alert' });
    const run = attr(el('button', { type: 'button', className: 'secondary' }, 'Run'), { 'aria-label': `Run ${f.name}` });
    run.addEventListener('click', () => {
      run.disabled = true;
      error.textContent = '';
      void tools.runFixture(f.name)
        .then((r) => {
          result.replaceChildren('Booked ', el('code', {}, r.appointment_id), ` at ${when(r.start_time)}: ${r.appointment_status}.`);
          say(`Fixture ${f.name} ran.`);
        })
        .catch((e: unknown) => fail(e, error))
        .finally(() => (run.disabled = false));
    });
    return attr(el('li', { className: 'card' }, el('h3', {}, f.name, ' ', f.webhook ? el('span', { className: 'chip' }, 'webhook follows') : ''), el('p', {}, f.outcome),
      el('p', { className: 'muted' }, 'Provider-location ', el('code', {}, f.provider_location_id)), run, result, error), { 'data-fixture': f.name });
  };
  const load = async (): Promise<void> => {
    $('fx-list').replaceChildren(...(await tools.fixtures()).map(item));
  };
  $('reset').addEventListener('click', () => {
    void confirmAction('Reset your sandbox? Your appointments, patients, webhook log and request log are deleted; your receiver and credentials stay.', 'Reset')
      .then(async (yes) => {
        if (!yes) return;
        const counts = await tools.reset();
        details($('reset-counts'), Object.entries(counts).map(([k, v]) => [COUNT_NAMES[k] ?? k, String(v)]));
        say('Your sandbox is reset.');
      })
      .catch((e: unknown) => fail(e));
  });
  return { load };
}
