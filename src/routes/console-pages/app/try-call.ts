/**
 * The "Try a call" view (docs/console.md, "The console pages"; docs/quickstart.md, "1. Get a token"):
 * reads the API reference at `/openapi.json`, offers its `/v1` operations grouped by tag, makes a field
 * for each path and query parameter, and shows the `curl` commands that get a token with the chosen
 * app's machine credential and make the call. Text only; nothing is sent from here.
 */
import { listApps, type Api } from './api.js';
import { $, attr, el, fail, say } from './dom.js';

interface Param { name: string; in: string; required?: boolean; description?: string; schema?: { example?: unknown; default?: unknown } }
interface Media { example?: unknown; schema?: { properties?: Record<string, { format?: string; contentMediaType?: string }> } }
interface Operation { tags?: string[]; summary?: string; parameters?: Param[]; requestBody?: { content?: Record<string, Media> } }
interface OpenApi { servers?: { url: string }[]; paths: Record<string, Record<string, Operation>> }

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** A shell word in single quotes (a `'` inside becomes `'\''`). */
export const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The `curl` that asks for a client-credentials token (docs/quickstart.md, "1. Get a token"). */
export function tokenCurl(authUrl: string, base: string, clientId: string): string {
  const body = `{"grant_type":"client_credentials","client_id":"${clientId}","client_secret":"'"$CLIENT_SECRET"'","audience":"${base}/"}`;
  return `TOKEN=$(curl -s -X POST ${shellQuote(`${authUrl}/oauth/token`)} \\\n  -H 'Content-Type: application/json' \\\n  -d '${body}' | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`;
}

/** A body as curl options: the JSON example with -d, or a multipart form's fields with -F (a file as `@file`). */
export function bodyOptions(content: Record<string, Media> | undefined): string[] {
  const json = content?.['application/json'];
  if (json) return [`-H 'Content-Type: application/json'`, `-d ${shellQuote(JSON.stringify(json.example ?? {}, null, 2))}`];
  const form = content?.['multipart/form-data'];
  if (form) return Object.entries(form.schema?.properties ?? {}).map(([k, p]) => `-F ${shellQuote(p.format === 'binary' || p.contentMediaType ? `${k}=@./file` : `${k}=`)}`);
  return [];
}

/** The `curl` of one call: path parameters filled in, query parameters that have a value, the body's options. */
export function callCurl(base: string, method: string, path: string, values: Record<string, string>, params: Param[], body: string[]): string {
  const filled = path.replace(/\{([^}]+)\}/g, (_m, name: string) => (values[name] ? encodeURIComponent(values[name]) : `{${name}}`));
  const q = new URLSearchParams();
  for (const p of params) if (p.in === 'query' && values[p.name]) q.set(p.name, values[p.name]!);
  const url = `${base}${filled}${q.size ? `?${q}` : ''}`;
  const lines = [`curl -s -X ${method.toUpperCase()} ${shellQuote(url)}`, `-H "Authorization: Bearer $TOKEN"`];
  lines.push(...body);
  return lines.join(' \\\n  ');
}

/** Wires the view; `load` reads the apps and the reference once. */
export function setupTryCall(api: Api, authUrl: string): { load(): Promise<void> } {
  const appSelect = $<HTMLSelectElement>('try-app');
  const opSelect = $<HTMLSelectElement>('try-op');
  let doc: OpenApi | null = null;
  let base = location.origin;
  const op = (): [string, string, Operation] | null => {
    const [method, path] = opSelect.value.split(' ');
    const o = method && path ? doc?.paths[path]?.[method] : undefined;
    return o ? [method!, path!, o] : null;
  };
  const params = (path: string, o: Operation): Param[] => [...((doc!.paths[path] as { parameters?: Param[] }).parameters ?? []), ...(o.parameters ?? [])].filter((p) => p.in === 'path' || p.in === 'query');

  const render = (): void => {
    const chosen = op();
    if (!chosen) return;
    const [method, path, o] = chosen;
    const values: Record<string, string> = {};
    for (const input of Array.from($('try-params').querySelectorAll('input'))) values[input.name] = input.value.trim();
    $('try-curl').querySelector('code')!.textContent = callCurl(base, method, path, values, params(path, o), bodyOptions(o.requestBody?.content));
    $('try-token').querySelector('code')!.textContent = tokenCurl(authUrl, base, appSelect.value || 'YOUR_CLIENT_ID');
  };
  const fields = (): void => {
    const chosen = op();
    if (!chosen) return;
    const [, path, o] = chosen;
    $('try-summary').textContent = o.summary ?? '';
    const ps = params(path, o);
    $('try-params').replaceChildren(el('legend', {}, 'Parameters'), ...(ps.length ? ps.map((p) => {
      const id = `try-p-${p.in}-${p.name}`;
      const example = p.schema?.example ?? p.schema?.default;
      const input = attr(el('input', { id, name: p.name, autocomplete: 'off', spellcheck: false, required: p.in === 'path' }), p.description ? { 'aria-describedby': `${id}-d` } : {});
      if (p.in === 'path' && example !== undefined) input.value = String(example);
      else if (example !== undefined) input.placeholder = String(example);
      input.addEventListener('input', render);
      return el('div', { className: 'field' }, el('label', { htmlFor: id }, `${p.name} (${p.in}${p.required || p.in === 'path' ? ', required' : ''})`), input,
        ...(p.description ? [el('p', { id: `${id}-d`, className: 'muted' }, p.description)] : []));
    }) : [el('p', { className: 'muted' }, 'None.')]));
    render();
  };

  const load = async (): Promise<void> => {
    if (!doc) {
      const res = await fetch('/openapi.json', { headers: { accept: 'application/json' } });
      if (!res.ok) throw new Error(`/openapi.json: ${res.status}`);
      doc = (await res.json()) as OpenApi;
      base = doc.servers?.[0]?.url.replace(/\/$/, '') ?? location.origin;
      const groups = new Map<string, HTMLOptionElement[]>();
      for (const [path, item] of Object.entries(doc.paths)) {
        if (!path.startsWith('/v1/')) continue;
        for (const m of METHODS) {
          const o = item[m];
          if (!o) continue;
          const tag = o.tags?.[0] ?? 'other';
          groups.set(tag, [...(groups.get(tag) ?? []), el('option', { value: `${m} ${path}` }, `${m.toUpperCase()} ${path}${o.summary ? ` — ${o.summary}` : ''}`)]);
        }
      }
      opSelect.replaceChildren(...[...groups].sort(([a], [b]) => a.localeCompare(b)).map(([tag, opts]) => attr(el('optgroup', {}, ...opts), { label: tag })));
      fields();
    }
    const apps = await listApps(api);
    const chosen = appSelect.value;
    appSelect.replaceChildren(...apps.flatMap((a) => a.clients.filter((c) => c.kind === 'machine' && !c.revoked_at)
      .map((c) => el('option', { value: c.client_id }, `${a.name} (${a.env}) — ${c.client_id}`))));
    if (chosen) appSelect.value = chosen;
    render();
  };

  opSelect.addEventListener('change', fields);
  appSelect.addEventListener('change', render);
  $('try-copy').addEventListener('click', () => {
    const text = `${$('try-token').textContent}\n\n${$('try-curl').textContent}`;
    void navigator.clipboard.writeText(text).then(() => say('Copied the commands.')).catch(() => fail('The browser did not allow copying: select the text instead.'));
  });
  return { load };
}
