/**
 * The Operator view (docs/console.md, "Production"; docs/api/admin.md#production-requests): whoever
 * holds `ADMIN_TOKEN` lists the production requests and grants one. The token is read from the field
 * for each call and kept nowhere else (no storage, no cookie); it is not the signed-in user's token.
 */
import { $, attr, el, fillTable, formValues, markInvalid, say, when } from './dom.js';

interface ProductionRequest {
  id: string; email: string; company: string; use_case: string; status: 'pending' | 'granted' | 'refused';
  created_at: string; decided_at: string | null; production_developer_id: string | null;
}

/** One admin API call with the operator's token; a failure's message says what to do. */
async function adminCall<T>(token: string, method: string, path: string): Promise<T> {
  const res = await fetch(`/admin/v1${path}`, { method, headers: { accept: 'application/json', authorization: `Bearer ${token}` } });
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
      when(r.created_at), r.email, r.company, r.use_case, r.status, when(r.decided_at), r.status === 'pending' ? grantButton(r) : r.production_developer_id ? el('code', {}, r.production_developer_id) : '',
    ]), 'No requests.');
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
