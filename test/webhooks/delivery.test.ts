import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { startLoop } from '../../src/jobs/loop.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery.js';
import { uuid } from '../../src/lib/ids.js';
import { setWebhookEndpoint } from '../../src/webhooks/endpoints.js';
import { BATCH, backoffMs, createWebhookWorker, listDeliveries, replayEvents } from '../../src/webhooks/worker.js';
import { newDeveloper, testApp, testPort, type TestApp } from '../helpers/app.js';
import { startReceiver } from './receiver.js';

const key = () => randomBytes(32).toString('base64');

describe('webhook delivery from the outbox', () => {
  let t: TestApp;
  let dev: NewDeveloper;
  beforeAll(async () => {
    t = await testApp();
    dev = await newDeveloper(t);
  });
  afterAll(async () => t.close());

  async function event(overrides: Partial<{ occurred_at: Date; update_type: 'created' | 'updated' | 'cancelled'; developer_id: string }> = {}): Promise<string> {
    const id = uuid();
    await t.db.insertInto('outbox_events').values({
      id, env: 'sandbox', developer_id: overrides.developer_id ?? dev.developer_id, appointment_id: uuid(), update_type: overrides.update_type ?? 'updated',
      changed_attributes: JSON.stringify([{ attribute_path: 'appointment.status' }]), status: 'pending', ...(overrides.occurred_at ? { occurred_at: overrides.occurred_at } : {}),
    }).execute();
    return id;
  }
  const status = async (id: string) => (await t.db.selectFrom('outbox_events').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
  const worker = (extra: Partial<Parameters<typeof createWebhookWorker>[1]> = {}) =>
    createWebhookWorker(t.db, { env: 'sandbox', allowPrivateTargets: true, baseDelayMs: 20, maxDelayMs: 100, ...extra });
  /** The webhook delivery job running as `serve` runs it, with short retry delays and poll interval `pollMs`. */
  const deliveryJob = (pollMs = 10) =>
    startLoop(
      webhookDeliveryJob({ db: t.db, config: { ...t.config, allowPrivateWebhookTargets: true, webhookRetryBaseMs: 20, workerPollMs: pollMs }, engine: t.handle.engine }),
      pino({ level: 'silent' }),
    );
  async function until(cond: () => Promise<boolean>, ms = 10_000): Promise<void> {
    const end = Date.now() + ms;
    while (!(await cond())) {
      if (Date.now() > end) throw new Error('condition not reached');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('delivers a signed event that an independent verifier accepts; the body is exactly what was signed', async () => {
    const k = key();
    const rx = await startReceiver([k]);
    try {
      await setWebhookEndpoint(t.db, { env: 'sandbox', developerId: dev.developer_id, url: rx.url, key: k, allowPrivateTargets: true });
      const id = await event({ update_type: 'cancelled' });
      expect(await worker().runOnce()).toBe(1);
      expect(rx.received).toHaveLength(1);
      const got = rx.received[0]!;
      expect(got.verifiedWith).toEqual([k]);
      expect(got.headers['webhook-id']).toBe(id);
      expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
      expect(got.body).toMatchObject({
        event_type: 'appointment_updated',
        data: { data_type: 'appointment_data', appointment_data: { appointment_update_type: 'cancelled', changed_attributes: [{ attribute_path: 'appointment.status' }] } },
      });
      const row = await status(id);
      expect(row.status).toBe('delivered');
      const deliveries = await listDeliveries(t.db, dev.developer_id);
      expect(deliveries[0]).toMatchObject({ event_id: id, attempt: 1, status_code: 200, error: null });
    } finally {
      await rx.close();
    }
  });

  it('retries 5xx, 429 and 408 with backoff and keeps the webhook-id stable, until it succeeds', async () => {
    const k = key();
    const rx = await startReceiver([k]);
    rx.plan = [500, 429, 408, 503];
    try {
      await setWebhookEndpoint(t.db, { env: 'sandbox', developerId: dev.developer_id, url: rx.url, key: k, allowPrivateTargets: true });
      const id = await event();
      const w = deliveryJob();
      await until(async () => (await status(id)).status === 'delivered');
      await w.stop();
      const mine = rx.received.filter((r) => r.headers['webhook-id'] === id);
      expect(mine).toHaveLength(5);
      expect(mine.every((r) => r.verifiedWith.length === 1)).toBe(true);
      expect((await status(id)).attempts).toBe(5);
      const attempts = (await listDeliveries(t.db, dev.developer_id)).filter((d) => d.event_id === id).map((d) => d.status_code).reverse();
      expect(attempts).toEqual([500, 429, 408, 503, 200]);
    } finally {
      await rx.close();
    }
  });

  it('keeps up with a backlog larger than one batch: a full batch is followed by the next at once, not after the poll interval', async () => {
    const k = key();
    const rx = await startReceiver([k]);
    // A developer of its own: the replay test below re-sends all of `dev`'s events of the last two days.
    const busy = await newDeveloper(t);
    try {
      await setWebhookEndpoint(t.db, { env: 'sandbox', developerId: busy.developer_id, url: rx.url, key: k, allowPrivateTargets: true });
      const ids: string[] = [];
      for (let i = 0; i < BATCH * 3 + 5; i++) ids.push(await event({ developer_id: busy.developer_id }));
      // A poll interval far longer than the test: without the immediate follow-up only one batch would go.
      const w = deliveryJob(600_000);
      try {
        await until(async () => {
          const rows = await t.db.selectFrom('outbox_events').select('status').where('id', 'in', ids).execute();
          return rows.every((r) => r.status === 'delivered');
        });
      } finally {
        await w.stop();
      }
      // Three full batches, each followed at once by the next pass, then the rest.
      expect(w.stats()).toMatchObject({ job: 'webhook-delivery', failures: 0 });
      expect(w.stats().items).toBeGreaterThanOrEqual(ids.length);
      const sent = new Set(rx.received.map((r) => r.headers['webhook-id']));
      expect(ids.every((id) => sent.has(id))).toBe(true);
      // Each event was recorded once, with its attempt, in the same statement as its new state.
      const records = (await listDeliveries(t.db, busy.developer_id, 1000)).filter((d) => ids.includes(d.event_id));
      expect(records).toHaveLength(ids.length);
      expect(records.every((d) => d.attempt === 1 && d.status_code === 200)).toBe(true);
    } finally {
      await rx.close();
    }
  });

  it('survives a receiver that is down for a while and a worker restart mid-retry: the event arrives', async () => {
    const k = key();
    const port = testPort();
    await setWebhookEndpoint(t.db, { env: 'sandbox', developerId: dev.developer_id, url: `http://127.0.0.1:${port}/hook`, key: k, allowPrivateTargets: true });
    const id = await event();
    await worker().runOnce();
    const row = await status(id);
    expect(row.status).toBe('pending');
    expect(row.attempts).toBe(1);
    expect(row.last_error).toMatch(/ECONNREFUSED/);
    // "Restart": a new worker on the same database, after the receiver comes up.
    const rx = await startReceiver([k], port);
    try {
      const second = deliveryJob();
      await until(async () => (await status(id)).status === 'delivered');
      await second.stop();
      expect(rx.received.filter((r) => r.headers['webhook-id'] === id).length).toBeGreaterThanOrEqual(1);
    } finally {
      await rx.close();
    }
  });

  it('gives up after 48 hours, and on a non-retryable answer at once; replay sends again', async () => {
    const k = key();
    const rx = await startReceiver([k]);
    try {
      await setWebhookEndpoint(t.db, { env: 'sandbox', developerId: dev.developer_id, url: rx.url, key: k, allowPrivateTargets: true });
      const old = await event({ occurred_at: new Date(Date.now() - 48 * 3600_000 + 5) });
      rx.plan = [503];
      await worker().runOnce();
      expect((await status(old)).status).toBe('failed');
      const rejected = await event();
      rx.plan = [400];
      await worker().runOnce();
      expect((await status(rejected)).status).toBe('failed');
      const since = new Date(Date.now() - 49 * 3600_000);
      expect(await replayEvents(t.db, dev.developer_id, since)).toBeGreaterThanOrEqual(2);
      rx.plan = [];
      await worker().runOnce();
      expect((await status(old)).status).toBe('delivered');
      expect((await status(rejected)).status).toBe('delivered');
    } finally {
      await rx.close();
    }
  });

  it('signs with both keys while a key rotates', async () => {
    const oldKey = key();
    const newKey = key();
    const rx = await startReceiver([oldKey, newKey]);
    try {
      await setWebhookEndpoint(t.db, { env: 'sandbox', developerId: dev.developer_id, url: rx.url, key: oldKey, allowPrivateTargets: true });
      await setWebhookEndpoint(t.db, { env: 'sandbox', developerId: dev.developer_id, url: rx.url, key: newKey, allowPrivateTargets: true });
      await event();
      await worker().runOnce();
      const got = rx.received.at(-1)!;
      expect(String(got.headers['webhook-signature']).split(';')).toHaveLength(2);
      expect(got.verifiedWith.sort()).toEqual([oldKey, newKey].sort());
      // After the overlap, only the new key signs.
      await event();
      await worker({ now: () => new Date(Date.now() + 25 * 3600_000) }).runOnce();
      expect(rx.received.at(-1)!.verifiedWith).toEqual([newKey]);
    } finally {
      await rx.close();
    }
  });

  it('claims each event once when several workers run at the same time', async () => {
    const k = key();
    const rx = await startReceiver([k]);
    try {
      await setWebhookEndpoint(t.db, { env: 'sandbox', developerId: dev.developer_id, url: rx.url, key: k, allowPrivateTargets: true });
      const ids = await Promise.all(Array.from({ length: 12 }, () => event()));
      const before = rx.received.length;
      await Promise.all([worker().runOnce(), worker().runOnce(), worker().runOnce()]);
      const got = rx.received.slice(before).map((r) => r.headers['webhook-id']);
      expect(new Set(got).size).toBe(got.length);
      expect(got.sort()).toEqual([...ids].sort());
    } finally {
      await rx.close();
    }
  });

  it('backs off exponentially with jitter, capped', () => {
    expect(backoffMs(1, 5000, 3600_000, () => 0)).toBe(2500);
    expect(backoffMs(1, 5000, 3600_000, () => 1)).toBe(5000);
    expect(backoffMs(4, 5000, 3600_000, () => 1)).toBe(40000);
    expect(backoffMs(30, 5000, 3600_000, () => 1)).toBe(3600_000);
  });
});
