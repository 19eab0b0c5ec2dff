/**
 * The invitation page `GET`/`POST /practice/invitations/{token}` (docs/auth.md, "Practice accounts and
 * sign-in"): a server-rendered form that sets the invited staff member's password, with the sign-in
 * pages' layout, CSP and no framing (src/auth/authorize/html.ts). CSRF: a synchronizer token, the
 * HMAC of the invitation under a random HttpOnly SameSite=Strict cookie set by the page, checked with
 * the `Origin` on the post (RFC 9700 §4.7, as on the sign-in forms). Works without JavaScript.
 */
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { html, page, type RenderedPage } from '../../auth/authorize/html.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { DomainError } from '../../domain/errors.js';
import { acceptInvitation, openInvitation, type OpenInvitation } from '../../domain/practices/invitations.js';
import { MIN_PASSWORD_LENGTH } from '../../domain/users/create-user.js';
import { secretToken } from '../../lib/ids.js';
import { hashToken } from '../../lib/secrets.js';

const COOKIE = 'cb_invite';
const ROLE_TEXT = { practice_admin: 'administrator', practice_staff: 'staff member' } as const;

/** The form's CSRF token: bound to the browser's cookie and to this invitation. */
function csrfToken(browserSecret: string, token: string): string {
  return createHmac('sha256', browserSecret).update(`practice-invitation:${hashToken(token)}`).digest('base64url');
}

function csrfValid(browserSecret: string | undefined, token: string, presented: unknown): boolean {
  if (!browserSecret || typeof presented !== 'string') return false;
  const a = Buffer.from(csrfToken(browserSecret, token));
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

function formPage(inv: OpenInvitation, csrf: string, opts: { error?: string; fieldError?: string } = {}): RenderedPage {
  return page({
    title: 'Join your practice',
    content: html`<h1>Join ${inv.practiceName}</h1>
<p class="lead">You are invited as a ${ROLE_TEXT[inv.role]} of <strong>${inv.practiceName}</strong> on Carebook, as <strong>${inv.email}</strong>.</p>
${opts.error ? html`<div class="alert" role="alert" id="form-error"><p class="m0">${opts.error}</p></div>` : ''}
<form method="post" novalidate>
<input type="hidden" name="csrf_token" value="${csrf}">
<label for="password">Choose a password<span class="hint" id="password-hint">At least ${MIN_PASSWORD_LENGTH} characters.</span></label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" aria-describedby="password-hint${opts.fieldError ? ' password-error' : ''}"${opts.fieldError ? html` aria-invalid="true"` : ''} autofocus>
${opts.fieldError ? html`<p class="field-error" id="password-error">${opts.fieldError}</p>` : ''}
<label for="password_confirm">Confirm the password</label>
<input id="password_confirm" name="password_confirm" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}">
<button type="submit" class="primary">Create my account</button>
</form>`,
  });
}

function messagePage(title: string, message: string, detail: string, link?: { href: string; text: string }): RenderedPage {
  return page({
    title,
    content: html`<h1>${title}</h1>
<div class="${link ? 'notice' : 'alert'}" role="${link ? 'status' : 'alert'}"><p class="m0">${message}</p></div>
<p>${detail}</p>
${link ? html`<p><a href="${link.href}">${link.text}</a></p>` : ''}`,
  });
}

const unusable = (): RenderedPage =>
  messagePage('Invitation not valid', 'This invitation link is unknown, was already used, or has expired.', 'Ask your practice administrator for a new invitation.');

export const invitationPageRoutes: FastifyPluginAsync<{ config: Config; db: Db }> = async (app, { config, db }) => {
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  await app.register(cookie);
  const env = config.appEnv;
  const origin = new URL(config.publicBaseUrl).origin;
  const cookieOpts = { path: '/practice/invitations', httpOnly: true, sameSite: 'strict' as const, secure: origin.startsWith('https:'), maxAge: 3600 };
  const send = (reply: FastifyReply, status: number, p: RenderedPage) => reply.code(status).headers(p.headers).send(p.body);
  const schema = { hide: true, params: { type: 'object', properties: { token: { type: 'string', maxLength: 200 } }, required: ['token'] } };

  app.get<{ Params: { token: string } }>('/practice/invitations/:token', { schema }, async (req, reply) => {
    const inv = await openInvitation(db, env, req.params.token);
    if (!inv) return send(reply, 404, unusable());
    let secret = req.cookies[COOKIE];
    if (!secret || secret.length > 100) {
      secret = secretToken();
      reply.setCookie(COOKIE, secret, cookieOpts);
    }
    return send(reply, 200, formPage(inv, csrfToken(secret, req.params.token)));
  });

  app.post<{ Params: { token: string }; Body: Record<string, unknown> | undefined }>('/practice/invitations/:token', { schema }, async (req, reply) => {
    const { token } = req.params;
    const body = req.body ?? {};
    if (req.headers.origin !== undefined && req.headers.origin !== origin) {
      return send(reply, 403, messagePage('Refused', 'The form was sent from another site and was refused.', 'Open the invitation link again.'));
    }
    if (!csrfValid(req.cookies[COOKIE], token, body.csrf_token)) {
      return send(reply, 403, messagePage('Refused', 'The form could not be verified.', 'Open the invitation link again and retry.'));
    }
    const inv = await openInvitation(db, env, token);
    if (!inv) return send(reply, 404, unusable());
    const csrf = csrfToken(req.cookies[COOKIE]!, token);
    const password = typeof body.password === 'string' ? body.password : '';
    if (password !== body.password_confirm) {
      return send(reply, 400, formPage(inv, csrf, { error: 'Check the highlighted field.', fieldError: 'The two passwords differ.' }));
    }
    try {
      await acceptInvitation(db, env, token, password);
    } catch (e) {
      if (e instanceof DomainError && e.kind === 'invalid') {
        const first = e.errors[0];
        if (first?.field === 'password') return send(reply, 400, formPage(inv, csrf, { error: 'Check the highlighted field.', fieldError: `The password ${first.message}.` }));
        return send(reply, 409, messagePage('Cannot create the account', 'This e-mail address already has a Carebook account.', 'Ask your practice administrator to invite another address.'));
      }
      if (e instanceof DomainError && e.kind === 'not_found') return send(reply, 404, unusable());
      throw e;
    }
    req.log.info({ event: 'practice_invitation_accepted' }, 'practice invitation accepted');
    reply.clearCookie(COOKIE, cookieOpts);
    return send(reply, 200, messagePage('Your account is ready', `You can now sign in to the practice workspace as ${inv.email}.`, 'Use the e-mail address and the password you just chose.', { href: '/practice', text: 'Go to the practice workspace' }));
  });
};
