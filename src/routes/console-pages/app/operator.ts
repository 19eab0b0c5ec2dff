/**
 * The Operator view (docs/console.md, "Production"; docs/api/admin.md#production-requests): whoever
 * holds `ADMIN_TOKEN` lists the production requests and grants or refuses one (with a reason the
 * account reads). The token is read from the field
 * for each call and kept nowhere else (no storage, no cookie); it is not the signed-in user's token.
 */
import { $, attr, el, fillTable, formValues, markInvalid, say, when } from './dom.js';

interface ProductionRequest {
  id: string; email: string; company: string; use_case: string; status: 'pending' | 'granted' | 'refused';
  created_at: string; decided_at: string | null; production_developer_id: string | null; refusal_reason: string | null;
}

/** One admin API call with the operator's token; a failure's message says what to do. */
async function adminCall<T>(token: string, method: string, path: string, payload?: object): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${token}` };
  if (payload) headers['content-type'] = 'application/json';
  const res = await fetch(`/admin/v1${path}`, { method, headers, ...(payload ? { body: JSON.stringify(payload) } : {}) });
  const body = (await res.json().catch(() => undefined)) as { data?: T; errors?: { message: string }[] } | undefined;
  if (res.ok) return body?.data as T;
  if (res.status === 401 || res.status === 403) throw new Error('The admin token was refused. Check ADMIN_TOKEN.');
  // The list route always exists where the admin API is served, so its 404 means the API is elsewhere.
  if (res.status === 404 && method === 'GET') throw new Error('No admin API here: it is off (no ADMIN_TOKEN) or served on its own port (ADMIN_PORT). Use that port\'s address.');
  throw new Error(body?.errors?.map((e) => e.message).join('; ') || `${res.status} ${res.statusText}`);
}

/** Wires the view; `load` only clears the last answer (nothing is fetched without the token). */
export function setupOperator(): { load(): Promise<void> } {
  const form = $<HTMLFormElement>('op-form');
  const token = $<HTMLInputElement>('op-token');
  const alert = $('op-alert');
  const table = $<HTMLTableElement>('op-table');
  const problem = (e: unknown): void => {
    alert.textContent = e instanceof Error ? e.message : String(e);
  };

  const list = async (): Promise<void> => {
    const { status } = formValues(form);
    const rows = await adminCall<ProductionRequest[]>(token.value.trim(), 'GET', `/production-requests${status ? `?status=${encodeURIComponent(status)}` : ''}`);
    alert.textContent = '';
    fillTable(table, ['Requested', 'E-mail', 'Company', 'Use case', 'Status', 'Decided', ''], rows.map((r) => [
      when(r.created_at), r.email, r.company, r.use_case, r.status, when(r.decided_at), decision(r),
    ]), 'No requests.');
  };
  const decision = (r: ProductionRequest): Node | string => {
    if (r.status === 'pending') return el('div', { className: 'row' }, grantButton(r), refuseControl(r));
    if (r.production_developer_id) return el('code', {}, r.production_developer_id);
    return r.refusal_reason ? el('q', {}, r.refusal_reason) : '';
  };
  /** A Refuse button that opens a reason field in the row; the refusal is sent with the reason. */
  const refuseControl = (r: ProductionRequest): HTMLElement => {
    const box = el('div', { className: 'row' });
    const open = attr(el('button', { type: 'button', className: 'small' }, 'Refuse'), { 'aria-label': `Refuse ${r.email}`, 'aria-expanded': 'false' });
    open.addEventListener('click', () => {
      const id = `op-reason-${r.id}`;
      const input = attr(el('input', { id, name: 'reason', required: true, maxLength: 1000 }), { autocomplete: 'off' });
      const send = attr(el('button', { type: 'button', className: 'small danger' }, 'Send refusal'), { 'aria-label': `Send the refusal to ${r.email}` });
      send.addEventListener('click', () => {
        const reason = input.value.trim();
        markInvalid(input, !reason);
        if (!reason) {
          problem(new Error('reason: Say why the request is refused; the account reads it.'));
          input.focus();
          return;
        }
        void adminCall(token.value.trim(), 'POST', `/production-requests/${encodeURIComponent(r.id)}/refuse`, { reason })
          .then(async () => {
            say(`Production request of ${r.email} refused.`);
            await list();
          })
          .catch(problem);
      });
      box.replaceChildren(el('label', { htmlFor: id }, `Reason for refusing ${r.email}`), input, send);
      input.focus();
    });
    box.append(open);
    return box;
  };
  const grantButton = (r: ProductionRequest): HTMLElement => {
    const b = attr(el('button', { type: 'button', className: 'primary small' }, 'Grant'), { 'aria-label': `Grant ${r.email}`, 'data-request': r.id });
    b.addEventListener('click', () => void adminCall<{ app_id: string }>(token.value.trim(), 'POST', `/production-requests/${encodeURIComponent(r.id)}/grant`)
      .then(async (g) => {
        say(`Production granted to ${r.email} (app ${g.app_id}).`);
        await list();
      })
      .catch(problem));
    return b;
  };

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    markInvalid(token, !token.value.trim());
    if (!token.value.trim()) {
      problem(new Error('token: Enter the admin token.'));
      token.focus();
      return;
    }
    void list().catch(problem);
  });
  return {
    load: async () => {
      alert.textContent = '';
    },
  };
}
