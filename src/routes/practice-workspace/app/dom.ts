/** DOM helpers of the practice workspace: the shared ones, and its own. */

export * from '../../web-app/browser/dom.js';

/** `pending_booking` → `pending booking`. */
export const human = (s: string): string => s.replace(/_/g, ' ');
