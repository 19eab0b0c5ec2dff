/**
 * Key rotation measured from the key change itself (docs/api/webhooks.md#registering-a-receiver), and refused targets that are
 * never retried (issue #5 §3), whatever the refusal's wording.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { uuid } from '../../src/lib/ids.js';
import { setWebhookEndpoint } from '../../src/webhooks/endpoints.js';
import { isRetryable, sendWebhook } from '../../src/webhooks/send.js';
import { policyFor } from '../../src/webhooks/target-policy.js';
import { createWebhookWorker } from '../../src/webhooks/worker.js';
import { newDeveloper, testApp, testPort, type TestApp } from '../helpers/app.js';
import { startReceiver } from './receiver.js';

const key = () => randomBytes(32).toString('base64');
const HOUR = 3600_000;

describe('webhook key rotation and refused targets', () => {
  let t: TestApp;
  let dev: NewDeveloper;
  beforeAll(async () => {
    t = await testApp();
    dev = await newDeveloper(t);
  });
  afterAll(async () => t.close());

  async function event(): Promise<string> {
    const id = uuid();
    await t.db
      .insertInto('outbox_events')
      .values({ id, env: 'sandbox', developer_id: dev.developer_id, appointment_id: uuid(), update_type: 'updated', changed_attributes: JSON.stringify([{ attribute_path: 'appointment.status' }]) })
      .execute();
    return id;
  }
  const worker = (now: Date) => createWebhookWorker(t.db, { env: 'sandbox', allowPrivateTargets: true, now: () => now });

  it('keeps both signatures for 24 h after the key changed, even when the same key is set again with a new URL', async () => {
    const [oldKey, newKey] = [key(), key()];
    const [rx1, rx2] = [await startReceiver([oldKey, newKey]), await startReceiver([oldKey, newKey])];
    const t0 = Date.now();
    const set = (url: string, k: string, at: number) =>
      setWebhookEndpoint(t.db, { env: 'sandbox', developerId: dev.developer_id, url, key: k, allowPrivateTargets: true, now: new Date(at) });
    try {
      await set(rx1.url, oldKey, t0 - 48 * HOUR);
      await set(rx1.url, newKey, t0); // the key changes here
      await set(rx2.url, newKey, t0 + 23 * HOUR); // only the URL changes
      await event();
      await worker(new Date(t0 + 23.5 * HOUR)).runOnce();
      expect(rx2.received).toHaveLength(1);
      expect(rx2.received[0]!.verifiedWith.sort()).toEqual([oldKey, newKey].sort());
      // 24 h after the key changed (not after the URL change), only the new key signs.
      await event();
      await worker(new Date(t0 + 24.5 * HOUR)).runOnce();
      expect(rx2.received).toHaveLength(2);
      expect(rx2.received[1]!.verifiedWith).toEqual([newKey]);
      expect(String(rx2.received[1]!.headers['webhook-signature']).split(';')).toHaveLength(1);
    } finally {
      await rx1.close();
      await rx2.close();
    }
  });

  it('marks every refusal as refused and not retryable, whatever its wording; a transport error stays retryable', async () => {
    const prod = policyFor('production', false);
    const plainHttp = await sendWebhook('http://hooks.example.org/x', '{}', {}, prod);
    expect(plainHttp).toMatchObject({ statusCode: null, refused: true, error: 'must be an https URL' });
    expect(isRetryable(plainHttp)).toBe(false);
    const credentials = await sendWebhook('https://u:p@hooks.example.org/x', '{}', {}, prod);
    expect(credentials).toMatchObject({ refused: true });
    expect(isRetryable(credentials)).toBe(false);
    // Refused on the resolved address, at connect time.
    const rx = await startReceiver([]);
    try {
      const resolved = await sendWebhook(`https://localhost:${rx.port}/hook`, '{}', {}, prod);
      expect(resolved).toMatchObject({ statusCode: null, refused: true });
      expect(isRetryable(resolved)).toBe(false);
    } finally {
      await rx.close();
    }
    const down = await sendWebhook(`http://127.0.0.1:${testPort()}/hook`, '{}', {}, policyFor('sandbox', true));
    expect(down).toMatchObject({ statusCode: null, refused: false });
    expect(isRetryable(down)).toBe(true);
  });

  it('fails an event at once when its receiver is refused, instead of retrying it for 48 hours', async () => {
    // A receiver stored before the policy refused it (here: credentials in the URL).
    await t.db
      .updateTable('webhook_endpoints')
      .set({ url: `http://user:pw@127.0.0.1:${testPort()}/hook`, key: key() })
      .where('developer_id', '=', dev.developer_id)
      .execute();
    const id = await event();
    await worker(new Date()).runOnce();
    const row = await t.db.selectFrom('outbox_events').select(['status', 'attempts', 'last_error']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'failed', attempts: 1, last_error: 'must not contain credentials' });
    const records = await t.db.selectFrom('webhook_deliveries').select(['status_code', 'error']).where('event_id', '=', id).execute();
    expect(records).toEqual([{ status_code: null, error: 'must not contain credentials' }]);
  });
});
