/**
 * `GET {auth_url}/authorize` and its forms (RFC 6749 §4.1.1–4.1.2, RFC 7636, interface.md §5.2):
 * sign in, patient sign-up, approval, deny. Server-rendered, works without JavaScript.
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
import { createUser, MIN_PASSWORD_LENGTH, UserInputError } from '../../domain/users/create-user.js';
import { secretToken } from '../../lib/ids.js';
import { hashPassword, hashToken, verifyPassword } from '../../lib/secrets.js';
import { checkAuthorizeRequest, csrfToken, csrfTokenValid, redirectWith } from '../authorize/authorization-request.js';
import { loadAuthorizationRequest, requestHandle, requestHandleKeys, storeOnFirstUse, type StoredAuthorizationRequest } from '../authorize/request-handle.js';
import type { RenderedPage } from '../authorize/html.js';
import { issueAuthorizationCode } from '../authorize/issue-code.js';
import { endLoginSession, resumeLoginSession, startLoginSession } from '../authorize/login-sessions.js';
import { consentPage, errorPage, signInPage, signUpPage, type FieldErrors, type FormContext } from '../authorize/pages.js';
import { SESSION_MAX_TTL_MS } from '../lifetimes.js';
import { DomainError } from '../../domain/errors.js';
import type { RateLimiter } from '../../http/rate-limit.js';
import { clear, refund, take, type LoginLimits } from '../rate-limit.js';

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

export function sendPage(reply: FastifyReply, status: number, p: RenderedPage): FastifyReply {
  return reply.code(status).headers(p.headers).send(p.body);
}

type Body = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function authorizeRoutes(app: FastifyInstance, deps: AuthorizeRouteDeps): void {
  const { config, db } = deps;
  const env = config.appEnv;
  const handleDeps = { config, db, verifier: deps.verifier, handleKeys: requestHandleKeys(config) };
  const authOrigin = new URL(config.authUrl).origin;
  const basePath = new URL(config.authUrl).pathname.replace(/\/+$/, '');
  const cookieBase = {
    path: basePath || '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: new URL(config.authUrl).protocol === 'https:',
  };
  // Unknown e-mail addresses cost the same argon2id verification as known ones.
  let dummyHash: Promise<string> | undefined;
  const dummy = (): Promise<string> => (dummyHash ??= hashPassword(secretToken()));

  const ctx = (browserId: string, handle: string, r: StoredAuthorizationRequest | { appName: string; redirectUri: string }): FormContext => ({
    basePath,
    handle,
    csrfToken: csrfToken(browserId, handle),
    appName: r.appName,
    redirectOrigin: new URL(r.redirectUri).origin,
  });

  const expired = (reply: FastifyReply): FastifyReply =>
    sendPage(reply, 400, errorPage('This sign-in page has expired or was opened in another browser.'));

  /** The pending request named by `request` (query or form) for this browser, or an error page sent. */
  async function pending(req: FastifyRequest, reply: FastifyReply, handle: unknown, post: boolean): Promise<{ r: StoredAuthorizationRequest; browserId: string; handle: string } | undefined> {
    const browserId = req.cookies[BROWSER_COOKIE];
    if (post) {
      const origin = req.headers.origin;
      if (origin !== undefined && origin !== authOrigin) {
        sendPage(reply, 403, errorPage('The form was sent from another site and was refused.'));
        return undefined;
      }
    }
    const r = await loadAuthorizationRequest(handleDeps, handle, browserId);
    if (!r || !browserId || typeof handle !== 'string') {
      expired(reply);
      return undefined;
    }
    if (post && !csrfTokenValid(browserId, handle, (req.body as Body | undefined)?.csrf_token)) {
      sendPage(reply, 403, errorPage('The form could not be verified.', 'Go back, reload the page and try again.'));
      return undefined;
    }
    // The user acts: from now on the request is stored (and can be completed only once).
    if (post) await storeOnFirstUse(handleDeps, handle, r, browserId);
    return { r, browserId, handle };
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
      const session = valid.forceLogin ? undefined : await resumeLoginSession(db, env, req.cookies[SESSION_COOKIE]);
      if (session && (!valid.loginHint || valid.loginHint.toLowerCase() === session.email.toLowerCase())) {
        return sendPage(reply, 200, consentPage(c, { email: session.email, scopes: valid.scopes }));
      }
      return sendPage(reply, 200, signInPage(c, { email: valid.loginHint ?? '' }));
    },
  );

  app.get('/authorize/signin', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const p = await pending(req, reply, (req.query as Body).request, false);
    if (!p) return reply;
    return sendPage(reply, 200, signInPage(ctx(p.browserId, p.handle, p.r), { email: p.r.loginHint ?? '' }));
  });

  app.get('/authorize/signup', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const p = await pending(req, reply, (req.query as Body).request, false);
    if (!p) return reply;
    return sendPage(reply, 200, signUpPage(ctx(p.browserId, p.handle, p.r), { minPasswordLength: MIN_PASSWORD_LENGTH }));
  });

  app.get('/authorize/consent', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const p = await pending(req, reply, (req.query as Body).request, false);
    if (!p) return reply;
    const session = await resumeLoginSession(db, env, req.cookies[SESSION_COOKIE]);
    if (!session) return reply.redirect(signInUrl(p.handle), 303);
    return sendPage(reply, 200, consentPage(ctx(p.browserId, p.handle, p.r), { email: session.email, scopes: p.r.scopes }));
  });

  app.post('/authorize/signin', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const body = (req.body ?? {}) as Body;
    const p = await pending(req, reply, body.request, true);
    if (!p) return reply;
    const c = ctx(p.browserId, p.handle, p.r);
    const email = str(body.email).trim();
    const password = str(body.password);
    const fieldErrors: FieldErrors = {};
    if (!email) fieldErrors.email = 'Enter your e-mail address.';
    if (!password) fieldErrors.password = 'Enter your password.';
    if (fieldErrors.email || fieldErrors.password) {
      return sendPage(reply, 400, signInPage(c, { email, error: 'Enter your e-mail address and password.', fieldErrors }));
    }
    const accountBucket = `signin:acct:${env}:${hashToken(email.toLowerCase())}`;
    const addressBucket = `signin:addr:${env}:${req.ip}`;
    // Count the attempt first, then check the password: under any concurrency at most `max`
    // attempts per window reach the password check (docs/auth.md, "Throttles").
    const wait = Math.max(
      await take(db, accountBucket, deps.limits.failuresPerAccount),
      await take(db, addressBucket, deps.limits.failuresPerAddress),
    );
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      const minutes = Math.ceil(wait / 60);
      return sendPage(reply, 429, signInPage(c, { email, error: `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` }));
    }
    const user = await db
      .selectFrom('users')
      .select(['id', 'password_hash'])
      .where('env', '=', env)
      .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
      .executeTakeFirst();
    const ok = await verifyPassword(user?.password_hash ?? (await dummy()), password);
    if (!user || !ok) {
      req.log.info({ event: 'signin_failed' }, 'sign-in failed');
      return sendPage(reply, 401, signInPage(c, { email, error: 'The e-mail address or password is incorrect.' }));
    }
    // A success is not held against the account or the address: only failures stay counted.
    await clear(db, accountBucket);
    await refund(db, addressBucket);
    const sessionId = await startLoginSession(db, env, user.id, p.r.anonymousSubject);
    reply.setCookie(SESSION_COOKIE, sessionId, { ...cookieBase, maxAge: SESSION_MAX_TTL_MS / 1000 });
    return reply.redirect(consentUrl(p.handle), 303);
  });

  app.post('/authorize/signup', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const body = (req.body ?? {}) as Body;
    const p = await pending(req, reply, body.request, true);
    if (!p) return reply;
    const c = ctx(p.browserId, p.handle, p.r);
    const email = str(body.email).trim();
    const password = str(body.password);
    const confirm = str(body.password_confirm);
    const render = (status: number, fieldErrors: FieldErrors, error = 'Check the highlighted fields.'): FastifyReply =>
      sendPage(reply, status, signUpPage(c, { email, error, fieldErrors, minPasswordLength: MIN_PASSWORD_LENGTH }));
    if (!email) return render(400, { email: 'Enter your e-mail address.' });
    if (password.length < MIN_PASSWORD_LENGTH) return render(400, { password: `Use at least ${MIN_PASSWORD_LENGTH} characters.` });
    if (confirm !== password) return render(400, { password_confirm: 'The passwords do not match.' });
    // Count the sign-up first, then create the account (docs/auth.md, "Throttles").
    const wait = await take(db, `signup:addr:${env}:${req.ip}`, deps.limits.signupsPerAddress);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      return render(429, {}, 'Too many accounts were created from your network. Try again later.');
    }
    // The same answer whether or not the e-mail address already has an account (no account
    // enumeration, docs/auth.md, "Sign-up"): the sign-in page, asking for the password. A new
    // account is created; for a known address nothing changes, and the password is hashed all the
    // same so that both take as long.
    try {
      await createUser(db, { env, email, password, role: 'patient' });
      req.log.info({ event: 'signup' }, 'patient signed up');
    } catch (e) {
      if (!(e instanceof UserInputError)) throw e;
      if (!/already exists/.test(e.message)) {
        const key: keyof FieldErrors = e.field === 'password' ? 'password' : 'email';
        return render(400, { [key]: `${key === 'email' ? 'E-mail address' : 'Password'} ${e.message}.` });
      }
      await hashPassword(password);
    }
    return sendPage(reply, 200, signInPage(c, { email, notice: SIGNED_UP }));
  });

  app.post('/authorize/decision', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const body = (req.body ?? {}) as Body;
    const p = await pending(req, reply, body.request, true);
    if (!p) return reply;
    if (body.decision === 'deny') {
      const done = await db
        .updateTable('authorization_requests')
        .set({ completed_at: new Date() })
        .where('id_hash', '=', p.r.idHash)
        .where('completed_at', 'is', null)
        .returning('id_hash')
        .executeTakeFirst();
      if (!done) return expired(reply);
      return toClient(reply, p.r, { error: 'access_denied', error_description: 'The user denied the request.' });
    }
    if (body.decision !== 'allow') return sendPage(reply, 400, errorPage('Choose Allow or Deny.'));
    const session = await resumeLoginSession(db, env, req.cookies[SESSION_COOKIE]);
    if (!session) return reply.redirect(signInUrl(p.handle), 303);
    const code = await issueAuthorizationCode(db, env, p.r, session.userId);
    if (!code) return expired(reply);
    return toClient(reply, p.r, { code });
  });

  app.post('/authorize/signout', { config: HTML_ROUTE, schema: { hide: true } }, async (req, reply) => {
    const body = (req.body ?? {}) as Body;
    const p = await pending(req, reply, body.request, true);
    if (!p) return reply;
    await endLoginSession(db, req.cookies[SESSION_COOKIE]);
    reply.clearCookie(SESSION_COOKIE, cookieBase);
    return reply.redirect(signInUrl(p.handle), 303);
  });
}
