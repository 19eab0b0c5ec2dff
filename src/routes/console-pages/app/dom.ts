/** DOM helpers of the developer console: the shared ones, and its own. */
import { $, attr, el } from '../../web-app/browser/dom.js';

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

/** Fills a table: a header row and body rows (cells are text or nodes; a row's first cell is its row header). */
export function fillTable(table: HTMLTableElement, heads: string[], rows: (string | Node)[][], empty: string): void {
  const head = el('thead', {}, el('tr', {}, ...heads.map((h) => attr(el('th', {}, h), { scope: 'col' }))));
  const body = el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c, i) => (i === 0 ? attr(el('th', {}, c), { scope: 'row' }) : el('td', {}, c))))));
  if (!rows.length) body.append(el('tr', {}, attr(el('td', { className: 'muted' }, empty), { colspan: String(heads.length) })));
  table.replaceChildren(head, body);
}

/** A form's field values by name, trimmed (empty ones left out). */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const out: Record<string, string> = {};
  new FormData(form).forEach((v, k) => {
    if (typeof v === 'string' && v.trim()) out[k] = v.trim();
  });
  return out;
}

/** Marks a field invalid (aria-invalid="true") or clears the mark. */
export function markInvalid(input: HTMLElement, invalid: boolean): void {
  if (invalid) input.setAttribute('aria-invalid', 'true');
  else input.removeAttribute('aria-invalid');
}
