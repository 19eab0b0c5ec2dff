/** The Account view (docs/console.md, "Accounts and tokens", "Production"): who is signed in, the developer accounts, production access. */
import { getMe, requestProduction, type Api, type Me } from './api.js';
import { $, attr, details, el, fail, say, when } from './dom.js';

const PRODUCTION: Record<Me['production']['status'], string> = {
  none: 'Your account has sandbox access. When your integration is ready, ask for production access; the operator reviews each request.',
  pending: 'Your request for production access is waiting for the operator.',
  granted: 'Production access is granted: your production developer account and its app are listed under Apps.',
  refused: 'Your request for production access was refused. You may ask again.',
};

/** Where production access stands, with the operator's reason or the production console's link. */
function productionState(p: Me['production']): (string | Node)[] {
  const elsewhere = p.status === 'granted' && p.console_url;
  const parts: (string | Node)[] = [elsewhere ? 'Production access is granted.' : PRODUCTION[p.status]];
  if (p.requested_at) parts.push(` Requested ${when(p.requested_at)}.`);
  if (p.status === 'refused' && p.refusal_reason) parts.push(el('br'), 'The operator wrote: ', el('q', {}, p.refusal_reason));
  if (elsewhere) {
    parts.push(el('br'), 'Production runs as its own deployment: sign in to ', attr(el('a', {}, 'the production console'), { href: elsewhere }), ' with this e-mail address and password; your production app and its secret are there.');
  }
  return parts;
}

/** Wires the Account view; `load` re-reads `/console/v1/me`. */
export function setupAccount(api: Api): { load(): Promise<void> } {
  const load = async (): Promise<void> => {
    const me = await getMe(api);
    details($('account-details'), [['E-mail', me.email], ['Account id', el('code', {}, me.user_id)]]);
    $('developer-list').replaceChildren(...me.developers.map((d) => el('li', { className: 'card' }, el('strong', {}, d.name), ' ', el('span', { className: `chip ${d.env}` }, d.env), el('br'), el('code', {}, d.developer_id), ` · since ${when(d.created_at)}`)));
    const p = me.production;
    $('prod-state').replaceChildren(...productionState(p));
    $('prod-form').hidden = p.status !== 'none' && p.status !== 'refused';
  };
  const form = $<HTMLFormElement>('prod-form');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const company = $<HTMLInputElement>('prod-company');
    const use = $<HTMLTextAreaElement>('prod-use');
    const missing = [company, use].filter((i) => !i.value.trim());
    for (const i of [company, use]) {
      if (missing.includes(i)) i.setAttribute('aria-invalid', 'true');
      else i.removeAttribute('aria-invalid');
    }
    if (missing.length) {
      fail(`${missing.map((i) => i.name).join(', ')}: required.`);
      missing[0]!.focus();
      return;
    }
    void requestProduction(api, { company: company.value.trim(), use_case: use.value.trim() })
      .then(async () => {
        form.reset();
        await load();
        say('Production access requested. The operator will review it.');
      })
      .catch((e: unknown) => fail(e));
  });
  return { load };
}
