/**
 * Completes an approved authorization request: a new token family and a single-use authorization
 * code bound to client, redirect URI and PKCE challenge (RFC 6749 §4.1.2, RFC 7636 §4.4).
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { prefixedId, secretToken } from '../../lib/ids.js';
import { hashToken } from '../../lib/secrets.js';
import { AUTHORIZATION_CODE_TTL_MS, REFRESH_MAX_TTL_MS } from '../lifetimes.js';
import type { StoredAuthorizationRequest } from './request-handle.js';

/** Returns the code, or undefined when the request was completed meanwhile (double submit). */
export async function issueAuthorizationCode(db: Db, env: Env, req: StoredAuthorizationRequest, userId: string): Promise<string | undefined> {
  const code = secretToken();
  const now = Date.now();
  return db.transaction().execute(async (trx) => {
    const done = await trx
      .updateTable('authorization_requests')
      .set({ completed_at: new Date(now) })
      .where('id_hash', '=', req.idHash)
      .where('completed_at', 'is', null)
      .returning('id_hash')
      .executeTakeFirst();
    if (!done) return undefined;
    const familyId = prefixedId('fam', 16);
    await trx
      .insertInto('token_families')
      .values({
        id: familyId,
        env,
        client_id: req.clientId,
        user_id: userId,
        scopes: req.scopes,
        absolute_expires_at: new Date(now + REFRESH_MAX_TTL_MS),
        anonymous_subject: req.anonymousSubject,
      })
      .execute();
    await trx
      .insertInto('authorization_codes')
      .values({
        code_hash: hashToken(code),
        env,
        client_id: req.clientId,
        user_id: userId,
        redirect_uri: req.redirectUri,
        code_challenge: req.codeChallenge,
        scopes: req.scopes,
        family_id: familyId,
        expires_at: new Date(now + AUTHORIZATION_CODE_TTL_MS),
      })
      .execute();
    return code;
  });
}
