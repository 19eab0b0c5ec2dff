/**
 * The staff view, for practice administrators (docs/practice-guide.md, "Staff"): the practice's
 * members, inviting one (the one-time invitation link is shown once, never stored by the page) and
 * removing one (effective at once: membership is read on every call).
 */
import type { Api, Me } from './api.js';
import { $, attr, el, fail, focusOn, say } from './dom.js';

interface Member { user_id: string; email: string; role: string; created_at?: string }
const ROLE: Record<string, string> = { practice_admin: 'Administrator', practice_staff: 'Staff' };

/** Sets up the staff view; `load` lists the members. */
export function setupStaff(api: Api, me: Me): { load(): Promise<void> } {
  async function load(): Promise<void> {
    const members = await api.call<Member[]>('GET', '/practice/v1/staff');
    $('staff-rows').replaceChildren(
      ...members.map((m) => {
        const cells: Node[] = [el('td', { textContent: m.email }), el('td', { textContent: ROLE[m.role] ?? m.role }), el('td', { textContent: m.created_at ? m.created_at.slice(0, 10) : '' })];
        const actions = el('td');
        if (m.user_id !== me.user.id) {
          const rm = attr(el('button', { type: 'button', className: 'danger', textContent: 'Remove' }), { 'aria-label': `Remove ${m.email}` });
          rm.addEventListener('click', () => {
            if (!confirm(`Remove ${m.email} from the practice? They are signed out at once.`)) return;
            void api.call('DELETE', `/practice/v1/staff/${encodeURIComponent(m.user_id)}`).then(() => say(`${m.email} was removed.`)).then(load).then(() => focusOn($('staff-h'))).catch(fail);
          });
          actions.append(rm);
        }
        return el('tr', {}, ...cells, actions);
      }),
    );
  }

  $<HTMLFormElement>('invite').addEventListener('submit', (e) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    void api
      .call<{ invitation_url: string }>('POST', '/practice/v1/staff', { email: String(f.get('email')).trim(), role: f.get('role') })
      .then(async (inv) => {
        $<HTMLInputElement>('invite-link').value = inv.invitation_url;
        $('invite-result').hidden = false;
        (e.target as HTMLFormElement).reset();
        say('Invitation created.');
        await load();
        $<HTMLInputElement>('invite-link').select();
        $('invite-link').focus();
      })
      .catch(fail);
  });
  return { load };
}
