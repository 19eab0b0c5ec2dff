/**
 * The pending authorization request while the user signs in (docs/auth.md, "The sign-in pages").
 * Showing the sign-in page stores nothing: the page's forms carry a handle that holds the request's
 * own parameters and the time it was shown, authenticated with an HMAC under a server key derived
 * from the key-encryption key, over the handle and the browser's secret cookie: it cannot be made
 * or altered outside the service (not even by the browser that holds the cookie, so its showing
 * time cannot be moved), and it works in that browser only. Each use re-validates the
 * parameters exactly as `GET /authorize` did (`checkAuthorizeRequest`), so a handle can never say
 * more than its request could. The request is stored only when the user acts (the first form
 * posted), keyed by the handle's hash; from then on the stored row decides (completed requests
 * cannot be used again).
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { TokenVerifier } from '../../domain/credentials/principal.js';
import { hashToken } from '../../lib/secrets.js';
import { keyEncryptionOf } from '../key-encryption.js';
import { AUTHORIZATION_REQUEST_TTL_MS } from '../lifetimes.js';
import { checkAuthorizeRequest, type ValidAuthorizeRequest } from './authorization-request.js';

/** A pending authorization request, stored or carried by its handle (`idHash`: the handle's hash, the stored row's key). */
export type StoredAuthorizationRequest = Omit<ValidAuthorizeRequest, 'forceLogin'> & { idHash: string };

export interface RequestHandleDeps {
  config: Config;
  db: Db;
  verifier: TokenVerifier;
  /** The handle keys ({@link requestHandleKeys}): the first makes handles, any of them opens one. */
  handleKeys: Buffer[];
}

/** The longest handle accepted: the request's parameters are limited to 2 KB each by the check. */
const MAX_HANDLE_LENGTH = 16 * 1024;

/**
 * The keys that authenticate handles: one derived (HKDF-SHA256) from each configured key-encryption
 * key, the current one first (during a KEK rotation, pages shown before it still work). A process
 * without a KEK (an embedder that resolved none; it cannot sign tokens either) gets a random key:
 * its pages work in that process only, until it restarts.
 */
export function requestHandleKeys(config: Config): Buffer[] {
  const keks = keyEncryptionOf(config);
  if (!keks) return [randomBytes(32)];
  return [keks.current, keks.previous]
    .filter((k): k is Buffer => !!k)
    .map((k) => Buffer.from(hkdfSync('sha256', k, Buffer.alloc(0), 'carebook.authorize-request-handle', 32)));
}

const mac = (key: Buffer, browserId: string, payload: string): string =>
  createHmac('sha256', key).update(`authorize-request:${hashToken(browserId)}:${payload}`).digest('base64url');

/** The handle of a validated request's `query`, shown to the browser with secret cookie `browserId` at `now`. */
export function requestHandle(keys: Buffer[], query: Record<string, unknown>, browserId: string, now = Date.now()): string {
  const params = Object.fromEntries(Object.entries(query).filter(([, v]) => typeof v === 'string'));
  const payload = Buffer.from(JSON.stringify({ q: params, t: now })).toString('base64url');
  return `${payload}.${mac(keys[0]!, browserId, payload)}`;
}

/** The parameters and showing time of a handle made for this browser, or undefined (altered, another browser's, malformed). */
function openHandle(keys: Buffer[], handle: string, browserId: string): { query: Record<string, string>; shownAt: number } | undefined {
  const dot = handle.indexOf('.');
  if (dot <= 0) return undefined;
  const payload = handle.slice(0, dot);
  const given = Buffer.from(handle.slice(dot + 1));
  const genuine = keys.some((key) => {
    const expected = Buffer.from(mac(key, browserId, payload));
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
  if (!genuine) return undefined;
  try {
    const { q, t } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { q: Record<string, string>; t: number };
    return typeof t === 'number' && q && typeof q === 'object' ? { query: q, shownAt: t } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The pending request of `handle` for this browser: the stored one if the user has acted on it
 * (undefined once completed or expired), else the one the handle carries, re-validated (undefined
 * when altered, another browser's, expired, or no longer valid: client or redirect URI removed).
 */
export async function loadAuthorizationRequest(deps: RequestHandleDeps, handle: unknown, browserId: string | undefined): Promise<StoredAuthorizationRequest | undefined> {
  if (typeof handle !== 'string' || !handle || handle.length > MAX_HANDLE_LENGTH || !browserId) return undefined;
  const idHash = hashToken(handle);
  const row = await deps.db
    .selectFrom('authorization_requests as r')
    .innerJoin('oauth_clients as c', 'c.client_id', 'r.client_id')
    .innerJoin('developers as d', 'd.id', 'c.developer_id')
    .select(['r.id_hash', 'r.client_id', 'c.developer_id', 'd.name', 'r.redirect_uri', 'r.scopes', 'r.state', 'r.code_challenge', 'r.login_hint', 'r.anonymous_subject', 'r.browser_hash', 'r.expires_at', 'r.completed_at'])
    .where('r.id_hash', '=', idHash)
    .where('r.env', '=', deps.config.appEnv)
    .executeTakeFirst();
  if (row) {
    if (row.completed_at || row.expires_at.getTime() <= Date.now()) return undefined;
    if (!safeEqual(row.browser_hash, hashToken(browserId))) return undefined;
    return {
      idHash: row.id_hash,
      clientId: row.client_id,
      developerId: row.developer_id,
      appName: row.name,
      redirectUri: row.redirect_uri,
      scopes: row.scopes,
      state: row.state,
      codeChallenge: row.code_challenge,
      loginHint: row.login_hint,
      anonymousSubject: row.anonymous_subject,
    };
  }
  const opened = openHandle(deps.handleKeys, handle, browserId);
  if (!opened || opened.shownAt + AUTHORIZATION_REQUEST_TTL_MS <= Date.now()) return undefined;
  const check = await checkAuthorizeRequest(deps, opened.query);
  if (check.kind !== 'ok') return undefined;
  const { forceLogin: _forceLogin, ...request } = check.request;
  return { idHash, ...request };
}

/**
 * Stores the pending request `r` of `handle` when the user first acts on it (a form posted), bound
 * to this browser and expiring when the handle does; nothing when it is stored already.
 */
export async function storeOnFirstUse(deps: RequestHandleDeps, handle: string, r: StoredAuthorizationRequest, browserId: string): Promise<void> {
  const opened = openHandle(deps.handleKeys, handle, browserId);
  const shownAt = opened?.shownAt ?? Date.now();
  await deps.db
    .insertInto('authorization_requests')
    .values({
      id_hash: r.idHash,
      env: deps.config.appEnv,
      client_id: r.clientId,
      redirect_uri: r.redirectUri,
      scopes: r.scopes,
      state: r.state,
      code_challenge: r.codeChallenge,
      login_hint: r.loginHint,
      anonymous_subject: r.anonymousSubject,
      browser_hash: hashToken(browserId),
      expires_at: new Date(shownAt + AUTHORIZATION_REQUEST_TTL_MS),
    })
    .onConflict((oc) => oc.column('id_hash').doNothing())
    .execute();
  // Housekeeping: requests expired a day ago are of no further use.
  if (Math.random() < 0.05) {
    await deps.db.deleteFrom('authorization_requests').where('expires_at', '<', new Date(Date.now() - 24 * 3600 * 1000)).execute();
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
