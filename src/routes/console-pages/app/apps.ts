/**
 * The Apps view (docs/console.md, "Routes"): the account's apps with their clients at a glance, and
 * the form that creates an app, whose machine secret is shown once in the answer.
 */
import { createApp, listApps, type Api, type App, type Me } from './api.js';
import { $, attr, el, fail, say } from './dom.js';
import { secretCard } from './secret.js';

const kindName = { machine: 'machine credential', user: 'user client' } as const;

function appItem(app: App): HTMLLIElement {
  const link = el('a', { href: `#apps/${encodeURIComponent(app.app_id)}` }, app.name);
  const clients = el('ul', { className: 'plain' }, ...app.clients.map((c) => el('li', {}, `${kindName[c.kind]}: `, el('code', {}, c.client_id), c.revoked_at ? el('span', { className: 'chip bad' }, 'revoked') : '')));
  return attr(el('li', { className: 'card' }, el('h2', { className: 'card-title' }, link, ' ', el('span', { className: `chip ${app.env}` }, app.env)), clients), { 'data-app-id': app.app_id });
}

/** Splits a textarea's lines into URIs (blank lines dropped). */
export const lines = (text: string): string[] => text.split('\n').map((s) => s.trim()).filter(Boolean);

/** Wires the Apps view; `load` re-reads the list. */
export function setupApps(api: Api, me: Me): { load(): Promise<void> } {
  const devs = me.developers;
  const devField = $('new-app-dev-field');
  devField.hidden = devs.length < 2;
  $<HTMLSelectElement>('new-app-dev').replaceChildren(...devs.map((d) => el('option', { value: d.developer_id }, `${d.name} (${d.env})`)));

  const load = async (): Promise<void> => {
    const apps = await listApps(api);
    $('app-list').replaceChildren(...(apps.length ? apps.map(appItem) : [el('li', { className: 'muted' }, 'No apps yet.')]));
  };

  const form = $<HTMLFormElement>('new-app');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const name = $<HTMLInputElement>('new-app-name');
    name.removeAttribute('aria-invalid');
    if (!name.value.trim()) {
      name.setAttribute('aria-invalid', 'true');
      fail('name: Enter a name for the app.');
      name.focus();
      return;
    }
    const uris = lines($<HTMLTextAreaElement>('new-app-uris').value);
    const body = { name: name.value.trim(), ...(devs.length > 1 ? { developer_id: $<HTMLSelectElement>('new-app-dev').value } : {}), ...(uris.length ? { redirect_uris: uris } : {}) };
    void createApp(api, body)
      .then(async (app) => {
        form.reset();
        const machine = app.clients.find((c) => c.kind === 'machine');
        const out = $('new-app-secret');
        out.replaceChildren();
        if (machine?.client_secret) out.append(secretCard(machine.client_id, machine.client_secret, `Secret of ${app.name}`));
        say(`App ${app.name} created.`);
        await load();
      })
      .catch((e: unknown) => fail(e));
  });
  return { load };
}
