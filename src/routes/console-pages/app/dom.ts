/** DOM helpers of the developer console: the shared ones, and its own. */
import { $, el } from '../../web-app/browser/dom.js';

export * from '../../web-app/browser/dom.js';

/** Clears the page's status and alert (a message about another view would read as about this one). */
export function quiet(): void {
  $('status').textContent = '';
  $('alert').textContent = '';
}

/** A date-time as the reader's locale shows it. */
export const when = (iso: string | null): string => (iso ? new Date(iso).toLocaleString() : '—');

/** A definition list's rows. */
export function details(list: HTMLElement, rows: [string, string | Node][]): void {
  list.replaceChildren(...rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

/** Asks for confirmation in the page's dialog; resolves true when the user confirms. */
export function confirmAction(text: string, yes: string): Promise<boolean> {
  const dialog = $<HTMLDialogElement>('confirm');
  $('confirm-text').textContent = text;
  $('confirm-yes').textContent = yes;
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener('close', () => resolve(dialog.returnValue === 'yes'), { once: true }));
}
