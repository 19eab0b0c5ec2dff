/** Small DOM helpers of the service's pages: element lookup and creation, focus, status and alert messages. */

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

/** The elements a selector matches, as an array. */
export const all = <T extends Element = HTMLElement>(selector: string): T[] => Array.from(document.querySelectorAll<T>(selector as never)) as T[];
