/**
 * A developer's webhook receiver (docs/api/admin.md#webhooks `webhook set`). Setting a new key keeps the
 * previous one for `KEY_OVERLAP_HOURS` after the key changed (stored as `previous_key` and its expiry,
 * not derived from `updated_at`): deliveries carry both signatures meanwhile, so a receiver can switch
 * keys without dropping events (docs/api/webhooks.md#registering-a-receiver).
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

/**
 * Every error of a receiver URL and signing key (docs/api/errors.md, "Validation"): the URL against
 * the outbound address policy (docs/webhooks.md, "Where webhooks may go"), the key's base64 form.
 * Any value is taken (one of the wrong type is skipped: the schema names it); `fields` names them
 * as the calling route does.
 */
export function webhookTargetErrors(
  input: { url: unknown; key: unknown },
  policy: ReturnType<typeof policyFor>,
  fields: { url: string; key: string },
): { field: string; message: string }[] {
  const errors: { field: string; message: string }[] = [];
  if (typeof input.url === 'string') {
    try {
      checkUrl(input.url, policy);
    } catch (e) {
      errors.push({ field: fields.url, message: e instanceof TargetRefused ? e.message : 'must be a valid URL' });
    }
  }
  if (typeof input.key === 'string' && !isBase64Key(input.key)) errors.push({ field: fields.key, message: 'must be a base64 string' });
  return errors;
}

export interface WebhookEndpoint {
  url: string;
  /** Keys to sign with now: the current one, and the previous one during the overlap. */
  keys: string[];
}

/**
 * Registers or changes the developer's receiver (docs/api/admin.md#webhooks `webhook set`; issue #5 §3). A key that
 * differs from the current one becomes current, and the replaced key keeps signing for
 * `KEY_OVERLAP_HOURS` from that moment (docs/api/webhooks.md#registering-a-receiver). Setting the current key again (e.g. to change
 * only the URL) keeps the previous key and its expiry as they were.
 */
export async function setWebhookEndpoint(
  db: Db,
  input: { env: Env; developerId: string; url: string; key: string; allowPrivateTargets: boolean; now?: Date },
): Promise<void> {
  const [problem] = webhookTargetErrors(input, policyFor(input.env, input.allowPrivateTargets), { url: 'url', key: 'key' });
  if (problem) throw new WebhookInputError(problem.field, problem.message);
  const now = input.now ?? new Date();
  await db.transaction().execute(async (trx) => {
    const dev = await trx.selectFrom('developers').select('id').where('id', '=', input.developerId).where('env', '=', input.env).executeTakeFirst();
    if (!dev) throw new WebhookInputError('developer_id', `no developer ${input.developerId}`);
    const existing = await trx
      .selectFrom('webhook_endpoints')
      .select(['key', 'previous_key', 'previous_key_expires_at'])
      .where('developer_id', '=', input.developerId)
      .forUpdate()
      .executeTakeFirst();
    const rotated = existing !== undefined && existing.key !== input.key;
    const previous = rotated
      ? { previous_key: existing.key, previous_key_expires_at: new Date(now.getTime() + KEY_OVERLAP_HOURS * 3600_000) }
      : { previous_key: existing?.previous_key ?? null, previous_key_expires_at: existing?.previous_key_expires_at ?? null };
    const values = { url: input.url, key: input.key, ...previous, updated_at: now };
    await trx
      .insertInto('webhook_endpoints')
      .values({ developer_id: input.developerId, env: input.env, ...values })
      .onConflict((oc) => oc.column('developer_id').doUpdateSet(values))
      .execute();
  });
}

/** The columns of a `webhook_endpoints` row that say where and how to deliver. */
export interface EndpointRow {
  url: string;
  key: string;
  previous_key: string | null;
  previous_key_expires_at: Date | null;
}

/** The endpoint a receiver's row stands for at `now`: the current key, and the previous one until its expiry (docs/api/webhooks.md#registering-a-receiver). */
export function endpointOfRow(row: EndpointRow, now: Date): WebhookEndpoint {
  const previousActive = row.previous_key !== null && row.previous_key !== row.key && row.previous_key_expires_at !== null && now < row.previous_key_expires_at;
  return { url: row.url, keys: previousActive ? [row.key, row.previous_key!] : [row.key] };
}

/** The endpoint to deliver to (`endpointOfRow`), or undefined when the developer has no receiver. */
export async function webhookEndpointFor(db: Db, developerId: string, now: Date): Promise<WebhookEndpoint | undefined> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(['url', 'key', 'previous_key', 'previous_key_expires_at'])
    .where('developer_id', '=', developerId)
    .executeTakeFirst();
  return row ? endpointOfRow(row, now) : undefined;
}
