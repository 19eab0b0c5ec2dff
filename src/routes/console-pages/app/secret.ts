/**
 * The once-shown machine secret (docs/console.md, "Sign-up in the sandbox" and the rotate route): a
 * read-only field with a copy button and a plain note that it will not be shown again.
 */
import { attr, el, focusOn } from './dom.js';

let counter = 0;

/** A card showing `secret` of `clientId` once; focus moves to it so screen readers announce it. */
export function secretCard(clientId: string, secret: string, heading = 'Your new client secret'): HTMLElement {
  const id = `secret-${++counter}`;
  const input = attr(el('input', { id, value: secret, readOnly: true, className: 'mono', spellcheck: false }), { 'aria-describedby': `${id}-note`, autocomplete: 'off' });
  const note = el('p', { id: `${id}-note`, className: 'once' }, el('strong', {}, 'Shown once. '), 'Copy it now and keep it in your secret store: Carebook keeps only a hash and cannot show it again. If you lose it, rotate the secret.');
  const copied = attr(el('span', { className: 'muted' }), { role: 'status' });
  const copy = el('button', { type: 'button', className: 'primary' }, 'Copy secret');
  copy.addEventListener('click', () => {
    input.select();
    navigator.clipboard
      .writeText(secret)
      .then(() => (copied.textContent = 'Copied.'))
      .catch(() => (copied.textContent = 'Select the text and copy it with your keyboard.'));
  });
  const card = attr(el('section', { className: 'card secret' }, el('h3', {}, heading), el('p', {}, 'For ', el('code', {}, clientId), ':'), el('label', { htmlFor: id }, 'Client secret'), el('div', { className: 'copy-row' }, input, copy), copied, note), {
    'data-secret-for': clientId,
    'aria-label': heading,
  });
  queueMicrotask(() => card.isConnected && focusOn(card));
  return card;
}
