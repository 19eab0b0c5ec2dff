/** Small DOM helpers of the developer console: element lookup and creation, status and alert messages. */

export const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;

/** Creates an element with properties and children (text is never parsed as HTML). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

/** Sets attributes and returns the element (for aria-* and data-* in expressions). */
export function attr<T extends Element>(node: T, attrs: Record<string, string>): T {
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

/** Moves keyboard focus to an element that is not focusable by itself (a heading, a region). */
export function focusOn(node: HTMLElement): void {
  if (!node.hasAttribute('tabindex')) node.setAttribute('tabindex', '-1');
  node.focus();
}

/** Announces a message in the page's polite status region. */
export function say(message: string): void {
  $('alert').textContent = '';
  $('status').textContent = message;
}

/** Shows an error in an alert region (the page's by default). */
export function fail(e: unknown, region: HTMLElement = $('alert')): void {
  if (region.id === 'alert') $('status').textContent = '';
  region.textContent = e instanceof Error ? e.message : String(e);
}

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

/** The elements a selector matches, as an array. */
export const all = <T extends Element = HTMLElement>(selector: string): T[] => Array.from(document.querySelectorAll(selector)) as T[];
