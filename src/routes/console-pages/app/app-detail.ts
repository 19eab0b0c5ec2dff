/**
 * One app's page (docs/console.md, "Routes"): its clients with kind, id, scopes and dates; the user
 * client's redirect URIs editor; the machine credential's rotation with an optional grace period
 * (new secret shown once); revocation after a confirmation. Reading the app shows a secret never shown
 * before, once (docs/console.md, "Sign-up in the sandbox").
 */
import { ApiError, getApp, revoke, rotate, setRedirectUris, type Api, type App, type Client } from './api.js';
import { $, attr, confirmAction, details, el, fail, focusOn, say, when } from './dom.js';
import { secretCard } from './secret.js';

const GRACE = [
  [0, 'None: the old secret stops now'],
  [3600, '1 hour'],
  [86_400, '24 hours'],
] as const;

function uriEditor(api: Api, app: App, client: Client, reload: () => Promise<void>): HTMLElement {
  const base = `uris-${client.client_id}`;
  const list = el('ol', { className: 'uri-list' });
  const errors = attr(el('div', { className: 'inline-alert' }), { role: 'alert' });
  const addRow = (value: string): HTMLInputElement => {
    const n = list.children.length + 1;
    const input = el('input', { type: 'url', value, id: `${base}-${n}`, className: 'mono', spellcheck: false });
    const remove = el('button', { type: 'button', className: 'link-danger' }, 'Remove');
    attr(remove, { 'aria-label': `Remove redirect URI ${n}` });
    const row = el('li', { className: 'uri-row' }, el('label', { htmlFor: input.id, className: 'sr' }, `Redirect URI ${n}`), input, remove);
    remove.addEventListener('click', () => {
      row.remove();
      focusOn(add);
    });
    list.append(row);
    return input;
  };
  for (const u of client.redirect_uris) addRow(u);
  const add = el('button', { type: 'button', className: 'secondary' }, 'Add a redirect URI');
  add.addEventListener('click', () => addRow('').focus());
  const save = el('button', { type: 'submit', className: 'primary' }, 'Save redirect URIs');
  const form = el('form', { className: 'uris', noValidate: true }, el('h4', {}, 'Redirect URIs'), el('p', { className: 'muted' }, client.redirect_uris.length ? 'Where the sign-in page may send your users back to.' : 'None yet: your users cannot sign in through this client until you add one.'), list, errors, el('div', { className: 'actions' }, add, save));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const inputs = Array.from(list.querySelectorAll('input'));
    const uris = inputs.map((i) => i.value.trim()).filter(Boolean);
    for (const i of inputs) i.removeAttribute('aria-invalid');
    errors.textContent = '';
    void setRedirectUris(api, app.app_id, uris)
      .then(async () => {
        say('Redirect URIs saved. They apply to the next sign-in.');
        await reload();
      })
      .catch((e: unknown) => {
        // `redirect_uris[i]`: mark that field (its index among the non-empty ones).
        const filled = inputs.filter((i) => i.value.trim());
        for (const m of (e instanceof ApiError ? String(e.message) : '').matchAll(/redirect_uris\[(\d+)\]/g)) filled[Number(m[1])]?.setAttribute('aria-invalid', 'true');
        fail(e, errors);
      });
  });
  return form;
}

function rotateForm(api: Api, app: App, client: Client, reload: () => Promise<void>, out: HTMLElement): HTMLElement {
  const id = `grace-${client.client_id}`;
  const select = el('select', { id }, ...GRACE.map(([s, label]) => el('option', { value: String(s) }, label)));
  const form = el('form', { className: 'row' }, el('div', { className: 'field' }, el('label', { htmlFor: id }, 'Old secret keeps working for'), select), el('button', { type: 'submit', className: 'secondary' }, 'Rotate secret'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void rotate(api, app.app_id, client.client_id, Number(select.value))
      .then(async (c) => {
        await reload();
        say(c.previous_secret_expires_at ? `Secret rotated. The old secret works until ${when(c.previous_secret_expires_at)}.` : 'Secret rotated. The old secret no longer works.');
        if (c.client_secret) $('app-clients').prepend(secretCard(c.client_id, c.client_secret));
      })
      .catch((e: unknown) => fail(e, out));
  });
  return form;
}

function clientCard(api: Api, app: App, c: Client, reload: () => Promise<void>): HTMLElement {
  const alert = attr(el('div', { className: 'inline-alert' }), { role: 'alert' });
  const dl = el('dl', { className: 'details' });
  details(dl, [
    ['Client id', el('code', {}, c.client_id)],
    ['Scopes', el('ul', { className: 'chips' }, ...c.scopes.map((s) => el('li', { className: 'chip' }, s)))],
    ['Created', when(c.created_at)],
    ...(c.kind === 'machine' ? ([['Secret last rotated', when(c.secret_rotated_at)]] as [string, string][]) : []),
    ...(c.previous_secret_expires_at ? ([['Old secret works until', when(c.previous_secret_expires_at)]] as [string, string][]) : []),
    ...(c.revoked_at ? ([['Revoked', when(c.revoked_at)]] as [string, string][]) : []),
  ]);
  const title = c.kind === 'machine' ? 'Machine credential' : 'User client';
  const help = c.kind === 'machine' ? 'Client credentials grant, from your server. Keep its secret out of browsers and apps.' : 'Authorization code with PKCE, for your users\' sign-in. It has no secret.';
  const card = attr(el('section', { className: `card client${c.revoked_at ? ' revoked' : ''}` }, el('h2', { className: 'card-title' }, title, ' ', c.revoked_at ? el('span', { className: 'chip bad' }, 'revoked') : ''), el('p', { className: 'muted' }, help), dl, alert), {
    'data-client-id': c.client_id,
    'data-kind': c.kind,
  });
  if (c.revoked_at) return card;
  if (c.kind === 'user') card.append(uriEditor(api, app, c, reload));
  if (c.kind === 'machine') card.append(rotateForm(api, app, c, reload, alert));
  const revokeButton = el('button', { type: 'button', className: 'danger' }, `Revoke ${c.kind === 'machine' ? 'credential' : 'client'}`);
  revokeButton.addEventListener('click', () => {
    void confirmAction(`Revoke ${c.client_id}? It cannot get new tokens from now on and its users are signed out. This cannot be undone.`, 'Revoke')
      .then(async (yes) => {
        if (!yes) return focusOn(revokeButton);
        await revoke(api, app.app_id, c.client_id);
        await reload();
        say(`${c.client_id} is revoked.`);
      })
      .catch((e: unknown) => fail(e, alert));
  });
  card.append(el('div', { className: 'actions' }, revokeButton));
  return card;
}

/** Shows one app; a secret in the answer (never shown before) appears once, above the clients. */
export async function showApp(api: Api, appId: string): Promise<void> {
  const render = (app: App): void => {
    $('app-h').textContent = app.name;
    $('app-meta').textContent = `${app.env} · ${app.app_id} · created ${when(app.created_at)}`;
    const reload = async (): Promise<void> => render(await getApp(api, appId));
    const shown = app.clients.filter((c) => c.client_secret).map((c) => secretCard(c.client_id, c.client_secret!, 'Your client secret'));
    $('app-clients').replaceChildren(...shown, ...app.clients.map((c) => clientCard(api, app, c, reload)));
  };
  render(await getApp(api, appId));
}
