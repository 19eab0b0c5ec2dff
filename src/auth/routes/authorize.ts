/**
 * `GET {auth_url}/authorize` and its forms (RFC 6749 §4.1.1–4.1.2, RFC 7636, docs/api/auth.md#authorization-code-with-pkce):
 * sign in, sign-up (patients; developers on the developer console), approval, deny. Server-rendered, works without JavaScript.
 *
 * Protections: CSRF tokens bound to a browser cookie on every form (RFC 9700 §4.7), `Origin`
 * checked on posts, strict CSP and no framing (RFC 9700 §4.16), HttpOnly SameSite=Lax cookies
 * (Secure on https), throttled sign-in failures and sign-ups, argon2id passwords, no redirect to a
 * URI that is not registered for the client (RFC 6749 §4.1.2.1, RFC 9700 §4.1).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { TokenVerifier } from '../../domain/credentials/principal.js';
import { MIN_PASSWORD_LENGTH } from '../../domain/users/create-user.js';
import { secretToken } from '../../lib/ids.js';
import { checkAuthorizeRequest, csrfToken, redirectWith } from '../authorize/authorization-request.js';
import { decide } from '../authorize/decision.js';
import { accountMayUseClient, isConsoleClient, isFirstPartyClient, offersSignUp, wrongAccountMessage } from '../authorize/first-party.js';
import { issueAuthorizationCode } from '../authorize/issue-code.js';
import type { RenderedPage } from '../authorize/html.js';
import { endLoginSession, resumeLoginSession } from '../authorize/login-sessions.js';
import { consentPage, errorPage, signInPage, signUpPage, type FormContext } from '../authorize/pages.js';
import { openPendingRequest, type PendingRequest } from '../authorize/pending-request.js';
import { requestHandle, requestHandleKeys, type StoredAuthorizationRequest } from '../authorize/request-handle.js';
import { createSignIn } from '../authorize/sign-in.js';
import { signUp } from '../authorize/sign-up.js';
import { SESSION_MAX_TTL_MS } from '../lifetimes.js';
import { DomainError } from '../../domain/errors.js';
import type { RateLimiter } from '../../http/rate-limit.js';
import type { LoginLimits } from '../rate-limit.js';

export interface AuthorizeRouteDeps {
  config: Config;
  db: Db;
  verifier: TokenVerifier;
  limits: LoginLimits;
  /** The API's rate limiter: the authorization endpoint is limited per client address with it. */
  limiter?: RateLimiter | undefined;
}

/** Authorization requests per client address and minute (at most `RATE_LIMIT_PER_MINUTE`). */
export const AUTHORIZE_PER_MINUTE = 120;

const BROWSER_COOKIE = 'cb_browser';
const SESSION_COOKIE = 'cb_session';

/** What a sign-up answers, whether the address was new or not (docs/auth.md, "Sign-up"). */
export const SIGNED_UP = 'Done. If this e-mail address already had an account, it is unchanged. Sign in with your e-mail address and password to continue.';

/** Marks routes whose errors render as HTML pages rather than RFC 6749 JSON. */
export const HTML_ROUTE = { html: true } as const;

/** Sends a rendered page with `status` and the page's own headers (CSP, no framing, no caching). */
export function sendPage(reply: FastifyReply, status: number, p: RenderedPage): FastifyReply {
  return reply.code(status).headers(p.headers).send(p.body);
}

type Body = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Registers `GET /authorize` and the sign-in pages and forms; each route calls one function of `../authorize/`. */
export function authorizeRoutes(app: FastifyInstance, deps: AuthorizeRouteDeps): void {
  const { config, db } = deps;
  const env = config.appEnv;
  const basePath = new URL(config.authUrl).pathname.replace(/\/+$/, '');
  const handleDeps = { config, db, verifier: deps.verifier, handleKeys: requestHandleKeys(config), authOrigin: new URL(config.authUrl).origin };
  const cookieBase = {
    path: basePath || '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: new URL(config.authUrl).protocol === 'https:',
  };
  const signIn = createSignIn({ db, limits: deps.limits });

  const ctx = (browserId: string, handle: string, r: Pick<StoredAuthorizationRequest, 'appName' | 'redirectUri' | 'clientId'>): FormContext => ({
    basePath,
    handle,
    csrfToken: csrfToken(browserId, handle),
    appName: r.appName,
    redirectOrigin: new URL(r.redirectUri).origin,
    signUp: offersSignUp(env, r.clientId),
    accountKind: isConsoleClient(env, r.clientId) ? 'developer' : 'patient',
  });
  /** The page refusing an account that may not use this client (docs/auth.md, "Practice accounts and sign-in"). */
  const wrongAccount = (r: Pick<StoredAuthorizationRequest, 'appName' | 'clientId'>): string => wrongAccountMessage(env, r.clientId, r.appName);

  const expired = (reply: FastifyReply): FastifyReply =>
    sendPage(reply, 400, errorPage('This sign-in page has expired or was opened in another browser.'));

  /** The pending request named by `request` (query or form) for this browser, or an error page sent. */
  async function pending(req: FastifyRequest, reply: FastifyReply, post: boolean): Promise<Extract<PendingRequest, { kind: 'ok' }> | undefined> {
    const handle = post ? ((req.body ?? {}) as Body).request : (req.query as Body).request;
    const form = post ? { origin: req.headers.origin, csrfToken: (req.body as Body | undefined)?.csrf_token } : undefined;
    const p = await openPendingRequest(handleDeps, handle, req.cookies[BROWSER_COOKIE], form);
    if (p.kind === 'ok') return p;
    if (p.kind === 'foreign-origin') sendPage(reply, 403, errorPage('The form was sent from another site and was refused.'));
    else if (p.kind === 'unverified') sendPage(reply, 403, errorPage('The form could not be verified.', 'Go back, reload the page and try again.'));
    else expired(reply);
    return undefined;
  }

  function toClient(reply: FastifyReply, r: { redirectUri: string; state: string | null }, params: Record<string, string>): FastifyReply {
    return reply.header('cache-control', 'no-store').redirect(redirectWith(r.redirectUri, { ...params, state: r.state }, config.authUrl), 303);
  }

  const consentUrl = (handle: string): string => `${basePath}/authorize/consent?request=${encodeURIComponent(handle)}`;
  const signInUrl = (handle: string): string => `${basePath}/authorize/signin?request=${encodeURIComponent(handle)}`;

  app.get(
    '/authorize',
    { config: HTML_ROUTE, schema: { tags: ['auth'], summary: 'Authorization endpoint: sign-in page (RFC 6749 §4.1.1, PKCE S256)', security: [] } },
    async (req, reply) => {
      // Throttled per client address before anything is read or written (docs/auth.md, "Throttles").
      if (deps.limiter) {
        try {
          await deps.limiter.take(reply, `authorize:ip:${req.ip}`, Math.min(AUTHORIZE_PER_MINUTE, config.rateLimitPerMinute));
        } catch (e) {
          if (!(e instanceof DomainError) || e.kind !== 'rate_limited') throw e;
          reply.header('retry-after', String(e.details.retryAfterSeconds ?? 60));
          return sendPage(reply, 429, errorPage('Too many sign-in requests came from your network.', 'Wait a minute, then return to the app you came from and start again.'));
        }
      }
      const check = await checkAuthorizeRequest({ config, db, verifier: deps.verifier }, req.query as Record<string, unknown>);
      if (check.kind === 'error-page') return sendPage(reply, 400, errorPage(check.message));
      if (check.kind === 'redirect-error') return toClient(reply, check, { error: check.error, error_description: check.description });
      const valid = check.request;
      let browserId = req.cookies[BROWSER_COOKIE];
      if (!browserId || browserId.length > 100) {
        browserId = secretToken();
        reply.setCookie(BROWSER_COOKIE, browserId, { ...cookieBase, maxAge: SESSION_MAX_TTL_MS / 1000 });
      }
      // Nothing is stored until the user acts: the forms carry the request (request-handle.ts).
      const handle = requestHandle(handleDeps.handleKeys, req.query as Record<string, unknown>, browserId);
      const c = ctx(browserId, handle, valid);
      // The practice workspace always asks for the password (it has no consent page to show a session on);
      // a session of an account that may not use this client is not offered either.
      const firstParty = isFirstPartyClient(env, valid.clientId);
      const session = valid.forceLogin || firstParty ? undefined : await resumeLoginSession(db, env, req.cookies[SESSION_COOKIE]);
      if (session && accountMayUseClient(env, valid.clientId, session.role) && (!valid.loginHint || valid.loginHint.toLowerCase() === session.email.toLowerCase())) {
        return sendPage(reply, 200, consentPage(c, { email: session.email, scopes: valid.scopes }));
      }
      return sendPage(reply, 200, signInPage(c, { email: valid.loginHint ?? '' }));
    },
  );

  app.get('/authorize/signin', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const p = await pending(req, reply, false);
    if (!p) return reply;
    return sendPage(reply, 200, signInPage(ctx(p.browserId, p.handle, p.request), { email: p.request.loginHint ?? '' }));
  });

  app.get('/authorize/signup', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const p = await pending(req, reply, false);
    if (!p) return reply;
    if (!offersSignUp(env, p.request.clientId)) return sendPage(reply, 403, errorPage('Accounts for the practice workspace are created by invitation only.', 'Ask your practice administrator for an invitation.'));
    return sendPage(reply, 200, signUpPage(ctx(p.browserId, p.handle, p.request), { minPasswordLength: MIN_PASSWORD_LENGTH }));
  });

  app.get('/authorize/consent', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const p = await pending(req, reply, false);
    if (!p) return reply;
    const session = await resumeLoginSession(db, env, req.cookies[SESSION_COOKIE]);
    if (!session || isFirstPartyClient(env, p.request.clientId) || !accountMayUseClient(env, p.request.clientId, session.role)) return reply.redirect(signInUrl(p.handle), 303);
    return sendPage(reply, 200, consentPage(ctx(p.browserId, p.handle, p.request), { email: session.email, scopes: p.request.scopes }));
  });

  app.post('/authorize/signin', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const p = await pending(req, reply, true);
    if (!p) return reply;
    const body = (req.body ?? {}) as Body;
    const c = ctx(p.browserId, p.handle, p.request);
    const out = await signIn({ env, email: str(body.email), password: str(body.password), address: req.ip, anonymousSubject: p.request.anonymousSubject, clientId: p.request.clientId });
    switch (out.kind) {
      case 'incomplete':
        return sendPage(reply, 400, signInPage(c, { email: out.email, error: 'Enter your e-mail address and password.', fieldErrors: out.fieldErrors }));
      case 'throttled': {
        reply.header('retry-after', String(out.retryAfterSeconds));
        const minutes = Math.ceil(out.retryAfterSeconds / 60);
        return sendPage(reply, 429, signInPage(c, { email: out.email, error: `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` }));
      }
      case 'refused':
        req.log.info({ event: 'signin_failed' }, 'sign-in failed');
        return sendPage(reply, 401, signInPage(c, { email: out.email, error: 'The e-mail address or password is incorrect.' }));
      case 'wrong-account':
        req.log.info({ event: 'signin_wrong_client' }, 'sign-in refused for this client');
        return sendPage(reply, 403, signInPage(c, { email: out.email, error: wrongAccount(p.request) }));
      case 'not-a-member':
        req.log.info({ event: 'signin_not_a_member' }, 'sign-in refused: no longer a practice member');
        return sendPage(reply, 403, signInPage(c, {
          email: out.email,
          error: 'This account is no longer a member of a practice, so it cannot open the practice workspace. Ask your practice administrator to invite you again.',
        }));
      case 'signed-in': {
        if (isFirstPartyClient(env, p.request.clientId)) {
          // First party: Carebook asks for its own workspace, so there is no consent page
          // (docs/decisions/0014-practice-workspace.md, "Sign-in"); the code goes straight back.
          const code = await issueAuthorizationCode(db, env, p.request, out.userId);
          return code ? toClient(reply, p.request, { code }) : expired(reply);
        }
        reply.setCookie(SESSION_COOKIE, out.sessionId, { ...cookieBase, maxAge: SESSION_MAX_TTL_MS / 1000 });
        return reply.redirect(consentUrl(p.handle), 303);
      }
    }
  });

  app.post('/authorize/signup', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const p = await pending(req, reply, true);
    if (!p) return reply;
    if (!offersSignUp(env, p.request.clientId)) return sendPage(reply, 403, errorPage('Accounts for the practice workspace are created by invitation only.', 'Ask your practice administrator for an invitation.'));
    const body = (req.body ?? {}) as Body;
    const c = ctx(p.browserId, p.handle, p.request);
    const out = await signUp(
      { db, limits: deps.limits },
      { env, email: str(body.email), password: str(body.password), passwordConfirm: str(body.password_confirm), address: req.ip, accountKind: c.accountKind ?? 'patient' },
    );
    const form = { email: out.email, minPasswordLength: MIN_PASSWORD_LENGTH };
    switch (out.kind) {
      case 'invalid':
        return sendPage(reply, 400, signUpPage(c, { ...form, error: 'Check the highlighted fields.', fieldErrors: out.fieldErrors }));
      case 'throttled':
        reply.header('retry-after', String(out.retryAfterSeconds));
        return sendPage(reply, 429, signUpPage(c, { ...form, error: 'Too many accounts were created from your network. Try again later.', fieldErrors: {} }));
      case 'done':
        // The same answer whether or not the address already had an account (no account
        // enumeration, docs/auth.md, "Sign-up"): the sign-in page, asking for the password.
        if (out.created) req.log.info({ event: 'signup', account: c.accountKind }, 'account signed up');
        return sendPage(reply, 200, signInPage(c, { email: out.email, notice: SIGNED_UP }));
    }
  });

  app.post('/authorize/decision', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const p = await pending(req, reply, true);
    if (!p) return reply;
    const out = await decide(db, env, p.request, ((req.body ?? {}) as Body).decision, req.cookies[SESSION_COOKIE]);
    switch (out.kind) {
      case 'denied':
        return toClient(reply, p.request, { error: 'access_denied', error_description: 'The user denied the request.' });
      case 'approved':
        return toClient(reply, p.request, { code: out.code });
      case 'no-choice':
        return sendPage(reply, 400, errorPage('Choose Allow or Deny.'));
      case 'sign-in-needed':
        return reply.redirect(signInUrl(p.handle), 303);
      case 'completed':
        return expired(reply);
      case 'wrong-account':
        return sendPage(reply, 403, errorPage(wrongAccount(p.request), 'Sign out and sign in with another account, or return to the app you came from.'));
    }
  });

  app.post('/authorize/signout', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const p = await pending(req, reply, true);
    if (!p) return reply;
    await endLoginSession(db, req.cookies[SESSION_COOKIE]);
    reply.clearCookie(SESSION_COOKIE, cookieBase);
    return reply.redirect(signInUrl(p.handle), 303);
  });
}
