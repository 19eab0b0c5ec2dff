/**
 * The pages of `GET {auth_url}/authorize` (issue #3 §2): sign in, sign up (patients), approval
 * (with the offline-access message of docs/api/auth.md#refresh-tokens) and the error page shown when the
 * client cannot be redirected to (RFC 6749 §4.1.2.1). Plain HTML forms: no JavaScript anywhere.
 */
import { html, page, type Html, type RenderedPage } from './html.js';

/** Hidden fields every form of a pending authorization carries. */
export interface FormContext {
  /** Path prefix of the auth server, e.g. `/auth`. */
  basePath: string;
  /** Opaque handle of the pending authorization request. */
  handle: string;
  csrfToken: string;
  /** Display name of the app (the developer). */
  appName: string;
  /** Origin of the client's redirect URI (CSP form-action). */
  redirectOrigin: string;
  /** False for the practice workspace: no sign-up there. */
  signUp?: boolean;
  /** Whose account the sign-up creates: a patient's (developers' apps) or a developer's (the developer console). */
  accountKind?: 'patient' | 'developer';
}

const hidden = (ctx: FormContext): Html =>
  html`<input type="hidden" name="request" value="${ctx.handle}"><input type="hidden" name="csrf_token" value="${ctx.csrfToken}">`;

/** What each user-grantable scope lets the app do, in the user's words. */
const SCOPE_TEXT: Record<string, string> = {
  'external.appointment.read': 'See the appointments you book through this app',
  'external.appointment.write': 'Book, reschedule and cancel appointments for you',
  'external.schedulable_entity.read': "Look up providers and locations in the app's directory",
  offline_access: 'Keep access when you are not using the app (offline access)',
};

export interface FieldErrors {
  email?: string;
  password?: string;
  password_confirm?: string;
}

function field(opts: {
  id: string;
  label: string;
  type: 'email' | 'password';
  autocomplete: string;
  value?: string;
  error?: string | undefined;
  hint?: string;
  minlength?: number;
  autofocus?: boolean;
}): Html {
  const describedBy = [opts.hint ? `${opts.id}-hint` : '', opts.error ? `${opts.id}-error` : ''].filter(Boolean).join(' ');
  return html`<label for="${opts.id}">${opts.label}${opts.hint ? html`<span class="hint" id="${opts.id}-hint">${opts.hint}</span>` : ''}</label>
<input id="${opts.id}" name="${opts.id}" type="${opts.type}" autocomplete="${opts.autocomplete}" required${
    opts.minlength ? html` minlength="${opts.minlength}"` : ''
  }${opts.type === 'email' ? html` maxlength="255" spellcheck="false" autocapitalize="none"` : ''}${
    opts.value !== undefined ? html` value="${opts.value}"` : ''
  }${describedBy ? html` aria-describedby="${describedBy}"` : ''}${opts.error ? html` aria-invalid="true"` : ''}${opts.autofocus ? html` autofocus` : ''}>
${opts.error ? html`<p class="field-error" id="${opts.id}-error">${opts.error}</p>` : ''}`;
}

function alert(message: string | undefined): Html | string {
  return message ? html`<div class="alert" role="alert" id="form-error"><p class="m0">${message}</p></div>` : '';
}

function cancelForm(ctx: FormContext, label: string): Html {
  return html`<form method="post" action="${ctx.basePath}/authorize/decision">${hidden(ctx)}<button type="submit" name="decision" value="deny" class="link">${label}</button></form>`;
}

/** The sign-in form. */
export function signInPage(ctx: FormContext, opts: { email?: string; error?: string; fieldErrors?: FieldErrors; notice?: string } = {}): RenderedPage {
  const fe = opts.fieldErrors ?? {};
  return page({
    title: 'Sign in',
    formTargets: [ctx.redirectOrigin],
    content: html`<h1>Sign in</h1>
<p class="lead">to continue to <strong>${ctx.appName}</strong></p>
${opts.notice ? html`<div class="notice" role="status" style="margin:0 0 16px"><p class="m0">${opts.notice}</p></div>` : ''}
${alert(opts.error)}
<form method="post" action="${ctx.basePath}/authorize/signin" novalidate>
${hidden(ctx)}
${field({ id: 'email', label: 'E-mail address', type: 'email', autocomplete: 'username', value: opts.email ?? '', error: fe.email, autofocus: !opts.email })}
${field({ id: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', error: fe.password, autofocus: !!opts.email })}
<button type="submit" class="primary">Sign in</button>
</form>
<div class="alt">
${ctx.signUp === false ? '' : html`<p>${ctx.accountKind === 'developer' ? 'New to Carebook?' : 'New patient?'} <a href="${ctx.basePath}/authorize/signup?request=${encodeURIComponent(ctx.handle)}">${ctx.accountKind === 'developer' ? 'Create a developer account' : 'Create an account'}</a></p>`}
<div>${cancelForm(ctx, `Cancel and return to ${ctx.appName}`)}</div>
</div>`,
  });
}

/** The sign-up form: a patient account, or a developer account on the developer console. */
export function signUpPage(ctx: FormContext, opts: { email?: string; error?: string; fieldErrors?: FieldErrors; minPasswordLength: number }): RenderedPage {
  const fe = opts.fieldErrors ?? {};
  return page({
    title: 'Create your account',
    formTargets: [ctx.redirectOrigin],
    content: html`<h1>${ctx.accountKind === 'developer' ? 'Create your developer account' : 'Create your patient account'}</h1>
<p class="lead">to continue to <strong>${ctx.appName}</strong></p>
${alert(opts.error)}
<form method="post" action="${ctx.basePath}/authorize/signup" novalidate>
${hidden(ctx)}
${field({ id: 'email', label: 'E-mail address', type: 'email', autocomplete: 'email', value: opts.email ?? '', error: fe.email, autofocus: true })}
${field({ id: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', error: fe.password, hint: `At least ${opts.minPasswordLength} characters.`, minlength: opts.minPasswordLength })}
${field({ id: 'password_confirm', label: 'Confirm password', type: 'password', autocomplete: 'new-password', error: fe.password_confirm, minlength: opts.minPasswordLength })}
<button type="submit" class="primary">Create account</button>
</form>
<div class="alt">
<p>Already have an account? <a href="${ctx.basePath}/authorize/signin?request=${encodeURIComponent(ctx.handle)}">Sign in</a></p>
<div>${cancelForm(ctx, `Cancel and return to ${ctx.appName}`)}</div>
</div>`,
  });
}

/** The approval step: what the app asks for, with the offline-access message when it asks for it. */
export function consentPage(ctx: FormContext, opts: { email: string; scopes: string[] }): RenderedPage {
  const offline = opts.scopes.includes('offline_access');
  const listed = opts.scopes.filter((s) => s !== 'offline_access');
  return page({
    title: 'Allow access',
    formTargets: [ctx.redirectOrigin],
    content: html`<h1>Allow ${ctx.appName} to use your Carebook account?</h1>
<p class="lead">Signed in as <strong>${opts.email}</strong></p>
${listed.length ? html`<h2 id="scopes-heading">${ctx.appName} will be able to:</h2>
<ul class="scopes" aria-labelledby="scopes-heading">${listed.map((s) => html`<li>${SCOPE_TEXT[s] ?? s}</li>`)}</ul>` : ''}
${offline ? html`<div class="notice" role="note" aria-labelledby="offline-heading">
<h2 id="offline-heading">Offline access</h2>
<p class="m0">${ctx.appName} is asking for offline access: it will stay connected to your account and can act for you even when you are not using it, for up to 30 days (access lapses after 15 days without use). Choose <strong>Deny</strong> if you do not want that.</p>
</div>` : ''}
<form method="post" action="${ctx.basePath}/authorize/decision">
${hidden(ctx)}
<div class="actions">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>
<div class="alt">
<div>Not you? <form method="post" action="${ctx.basePath}/authorize/signout">${hidden(ctx)}<button type="submit" class="link">Sign in with another account</button></form></div>
</div>`,
  });
}

/** Shown when the request cannot go back to the app (unknown client, unregistered redirect URI, expired page). */
export function errorPage(message: string, detail = 'Return to the app you came from and start again.'): RenderedPage {
  return page({
    title: 'Cannot continue',
    content: html`<h1>We could not continue your sign-in</h1>
<div class="alert" role="alert"><p class="m0">${message}</p></div>
<p>${detail}</p>`,
  });
}
