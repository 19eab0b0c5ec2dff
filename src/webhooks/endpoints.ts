/**
 * A developer's webhook receiver (contracts.md §2 `webhook set`). Setting a new key keeps the
 * previous one for `KEY_OVERLAP_HOURS`: deliveries carry both signatures meanwhile, so a receiver can
 * switch keys without dropping events (contracts.md §7).
 */
import type { Db } from '../db/database.js';
import type { Env } from '../db/schema.js';
import { isBase64Key } from './signature.js';
import { checkUrl, policyFor, TargetRefused } from './target-policy.js';

export const KEY_OVERLAP_HOURS = 24;

export class WebhookInputError extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
  }
}

export interface WebhookEndpoint {
  url: string;
  /** Keys to sign with now: the current one, and the previous one during the overlap. */
  keys: string[];
}

export async function setWebhookEndpoint(
  db: Db,
  input: { env: Env; developerId: string; url: string; key: string; allowPrivateTargets: boolean },
): Promise<void> {
  try {
    checkUrl(input.url, policyFor(input.env, input.allowPrivateTargets));
  } catch (e) {
    throw new WebhookInputError('url', e instanceof TargetRefused ? e.message : 'invalid URL');
  }
  if (!isBase64Key(input.key)) throw new WebhookInputError('key', 'must be a base64 string');
  await db.transaction().execute(async (trx) => {
    const dev = await trx.selectFrom('developers').select('id').where('id', '=', input.developerId).where('env', '=', input.env).executeTakeFirst();
    if (!dev) throw new WebhookInputError('developer_id', `no developer ${input.developerId}`);
    const existing = await trx.selectFrom('webhook_endpoints').select(['keys']).where('developer_id', '=', input.developerId).forUpdate().executeTakeFirst();
    const previous = existing?.keys[0];
    const keys = previous && previous !== input.key ? [input.key, previous] : [input.key];
    await trx
      .insertInto('webhook_endpoints')
      .values({ developer_id: input.developerId, env: input.env, url: input.url, keys, updated_at: new Date() })
      .onConflict((oc) => oc.column('developer_id').doUpdateSet({ url: input.url, keys, updated_at: new Date() }))
      .execute();
  });
}

/** The endpoint to deliver to, with the previous key dropped once its overlap has passed. */
export async function webhookEndpointFor(db: Db, developerId: string, now: Date): Promise<WebhookEndpoint | undefined> {
  const row = await db.selectFrom('webhook_endpoints').select(['url', 'keys', 'updated_at']).where('developer_id', '=', developerId).executeTakeFirst();
  if (!row) return undefined;
  const overlapOver = now.getTime() - row.updated_at.getTime() > KEY_OVERLAP_HOURS * 3600_000;
  return { url: row.url, keys: overlapOver ? row.keys.slice(0, 1) : row.keys };
}
