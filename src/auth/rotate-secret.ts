/**
 * Client secret rotation (docs/api/auth.md#rotating-a-client-secret `POST /v1/credentials/rotate`): a new 256-bit secret for
 * one of the developer's confidential clients, stored as its SHA-256 only; the old secret stops
 * working at once, as does a previous one still in its grace period (RFC 6749 §2.3.1 client passwords; RFC 9700 §2.5 on client authentication).
 * Access tokens already issued stay valid until they expire (at most 60 minutes).
 */
import type { Db } from '../db/database.js';
import type { Env } from '../db/schema.js';
import { secretToken } from '../lib/ids.js';
import { hashToken } from '../lib/secrets.js';

export class UnknownConfidentialClient extends Error {}

/** Replaces the secret of `clientId` (a confidential client of `developerId`) and returns the new one. */
export async function rotateClientSecret(db: Db, env: Env, developerId: string, clientId: string): Promise<string> {
  const secret = secretToken();
  const row = await db
    .updateTable('oauth_clients')
    .set({ secret_hash: hashToken(secret), secret_rotated_at: new Date(), previous_secret_hash: null, previous_secret_expires_at: null, secret_reveal_pending: false })
    .where('client_id', '=', clientId)
    .where('developer_id', '=', developerId)
    .where('env', '=', env)
    .where('kind', '=', 'confidential')
    .where('revoked_at', 'is', null)
    .returning('client_id')
    .executeTakeFirst();
  if (!row) throw new UnknownConfidentialClient(`${clientId} is not a confidential client of your developer account`);
  return secret;
}
