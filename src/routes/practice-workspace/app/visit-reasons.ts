/**
 * The schedule view's visit reasons (docs/practice-guide.md, "Visit reasons and durations";
 * docs/decisions/0019-practice-visit-reasons.md): per reason the provider accepts, whether it is
 * offered at this location and its length for new and existing patients, with the directory's
 * values shown next to them. What the form sends is the practice's override of the directory: a
 * length equal to the directory's is sent as none (it then follows the directory).
 */
import { all, el } from './dom.js';

/** One visit reason as `GET …/visit_reasons` (and the schedule) answers it. */
export interface VisitReason {
  visit_reason_id: string;
  name: string;
  offered: boolean;
  duration_minutes: { new: number; existing: number };
  directory_duration_minutes: { new: number; existing: number };
  overridden: boolean;
}

const KINDS = [['new', 'New patients'], ['existing', 'Existing patients']] as const;

/** Fills `#reasons-list` with one fieldset per visit reason. */
export function renderVisitReasons(list: HTMLElement, reasons: VisitReason[]): void {
  if (reasons.length === 0) {
    list.replaceChildren(el('p', { className: 'muted', textContent: 'This provider has no visit reasons in the directory.' }));
    return;
  }
  list.replaceChildren(
    ...reasons.map((r, i) => {
      const id = `vr-${i}`;
      const offered = el('input', { type: 'checkbox', id: `${id}-offered`, name: 'offered', checked: r.offered });
      const dir = el('p', {
        id: `${id}-dir`,
        className: 'muted wide',
        textContent: `Directory: ${r.directory_duration_minutes.new} min new, ${r.directory_duration_minutes.existing} min existing${r.overridden ? ' · changed by your practice' : ''}`,
      });
      const fields = KINDS.map(([kind, label]) => {
        const input = el('input', {
          type: 'number', id: `${id}-${kind}`, name: kind, min: '5', max: '480', step: '1', required: true, inputMode: 'numeric',
          value: String(r.duration_minutes[kind]),
        });
        input.setAttribute('aria-describedby', dir.id);
        return el('div', { className: 'field' }, el('label', { htmlFor: input.id, textContent: `${label} (minutes)` }), input);
      });
      const fs = el('fieldset', { className: 'wide reason' },
        el('legend', { textContent: r.name }),
        el('label', { className: 'check wide' }, offered, ` Offered at this location`),
        ...fields, dir);
      fs.dataset.id = r.visit_reason_id;
      fs.dataset.dirNew = String(r.directory_duration_minutes.new);
      fs.dataset.dirExisting = String(r.directory_duration_minutes.existing);
      return fs;
    }),
  );
}

/** The `visit_reasons` body of the form in `#reasons-list`: only what differs from the directory. */
export function readVisitReasons(): { visit_reason_id: string; offered: boolean; duration_minutes: { new?: number; existing?: number } }[] {
  return all<HTMLFieldSetElement>('#reasons-list fieldset.reason').map((fs) => {
    const input = (name: string): HTMLInputElement => fs.querySelector(`input[name="${name}"]`) as HTMLInputElement;
    const value = (name: string): number => Number(input(name).value);
    const durations: { new?: number; existing?: number } = {};
    if (value('new') !== Number(fs.dataset.dirNew)) durations.new = value('new');
    if (value('existing') !== Number(fs.dataset.dirExisting)) durations.existing = value('existing');
    return { visit_reason_id: fs.dataset.id!, offered: input('offered').checked, duration_minutes: durations };
  });
}
