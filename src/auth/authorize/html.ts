/**
 * Server-rendered HTML for the sign-in pages: one escape function that every interpolated value
 * goes through, a page layout, and the security headers of the pages (strict CSP with a per-response
 * style nonce, no framing: RFC 9700 §4.16 on clickjacking of authorization pages).
 */
import { randomBytes } from 'node:crypto';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Escapes text for HTML element content and double- or single-quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

/** A piece of markup that is already safe (built from escaped parts). */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Tagged template: interpolated values are escaped unless they are `Html` (or arrays of `Html`). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new Html(out);
}

function render(v: unknown): string {
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  if (v === undefined || v === null || v === false) return '';
  return escapeHtml(v);
}

export interface RenderedPage {
  body: string;
  headers: Record<string, string>;
}

const CSS = `
:root{color-scheme:light;--ink:#1b2430;--muted:#4a5565;--line:#c9d1dc;--brand:#0b5cad;--brand-dark:#084785;--bg:#f3f6fa;--err:#a3190f;--err-bg:#fdecea;--note-bg:#fff7e0;--note-line:#b7791f}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:var(--bg)}
.top{padding:18px 24px}
.logo{font-weight:700;font-size:1.25rem;color:var(--brand);letter-spacing:.2px}
main{max-width:420px;margin:24px auto 48px;padding:32px;background:#fff;border:1px solid var(--line);border-radius:12px;box-shadow:0 2px 10px rgba(20,40,80,.06)}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 8px}
h2{font-size:1.05rem;margin:0 0 4px}
.lead{color:var(--muted);margin:0 0 24px}
label{display:block;font-weight:600;margin:16px 0 6px}
.hint{display:block;font-weight:400;color:var(--muted);font-size:.9rem;margin-top:2px}
input[type=email],input[type=password]{width:100%;padding:10px 12px;font:inherit;border:1px solid #8a96a8;border-radius:8px;background:#fff;color:var(--ink)}
input[aria-invalid=true]{border-color:var(--err);border-width:2px}
:focus-visible{outline:3px solid #f0a30a;outline-offset:2px}
.field-error{color:var(--err);font-size:.92rem;margin:6px 0 0}
button{font:inherit;cursor:pointer;border-radius:8px;padding:11px 16px;border:1px solid var(--brand);background:var(--brand);color:#fff;font-weight:600}
button:hover{background:var(--brand-dark)}
button.secondary{background:#fff;color:var(--brand)}
button.secondary:hover{background:#eef4fb}
button.link{background:none;border:0;padding:0;color:var(--brand);text-decoration:underline;font-weight:400}
.actions{display:flex;gap:12px;margin-top:24px;flex-wrap:wrap}
.actions button{flex:1 1 auto}
.primary{width:100%;margin-top:24px}
.alert{border:1px solid var(--err);background:var(--err-bg);color:var(--err);border-radius:8px;padding:12px 14px;margin:0 0 16px}
.notice{border-left:4px solid var(--note-line);background:var(--note-bg);border-radius:6px;padding:12px 14px;margin:20px 0 0}
.scopes{margin:8px 0 0;padding-left:22px}
.scopes li{margin:6px 0}
.alt{margin:24px 0 0;padding-top:16px;border-top:1px solid var(--line);color:var(--muted)}
.alt form{display:inline}
a{color:var(--brand)}
.m0{margin:0}
footer{text-align:center;color:var(--muted);font-size:.85rem;margin-bottom:24px}
`;

/**
 * A full HTML document with the page's security headers. `formTargets` are extra origins the page's
 * forms may end up at (the client's redirect URI: CSP `form-action` also governs the redirect that
 * follows a form post).
 */
export function page(opts: { title: string; content: Html; formTargets?: string[] }): RenderedPage {
  const nonce = randomBytes(16).toString('base64');
  const formAction = ["'self'", ...new Set(opts.formTargets ?? [])].join(' ');
  const body = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${opts.title} – Carebook</title>
<style nonce="${nonce}">${new Html(CSS)}</style>
</head>
<body>
<header class="top"><span class="logo">Carebook</span></header>
<main id="main">
${opts.content}
</main>
<footer><p>Carebook keeps your sign-in private: apps never see your password.</p></footer>
</body>
</html>
`.value;
  return {
    body,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'self' data:; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
      'x-frame-options': 'DENY',
      'cache-control': 'no-store',
      pragma: 'no-cache',
      // Same-origin referrers only: form posts then carry our Origin (checked), nothing leaks to the app.
      'referrer-policy': 'same-origin',
      'x-content-type-options': 'nosniff',
    },
  };
}
