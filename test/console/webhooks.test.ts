/**
 * The console's webhook tools (docs/console.md, "Webhooks") on a real database and a real local
 * receiver that verifies signatures with its own code: setting the receiver (a generated key shown
 * once), a signed test event, the delivery log with the first 256 bytes of each answer, its filters
 * and pages, replay of one event and of every failed one since a time, and another developer's event
 * refused as not found.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { deliveryLog, replayDelivery, replayFailedSince } from '../../src/domain/console/deliveries.js';
import { getReceiver, sendTestEvent, setReceiver, WITHHELD_ERROR } from '../../src/domain/console/webhooks.js';
import { DomainError } from '../../src/domain/errors.js';
import { uuid } from '../../src/lib/ids.js';
import { createWebhookWorker } from '../../src/webhooks/worker.js';
import { isLocalSandbox } from '../../src/config.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery.js';
import type { PassContext } from '../../src/jobs/loop.js';
import pino from 'pino';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { engineName } from '../helpers/db.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

const out = { allowPrivateTargets: true, reflectPrivateAnswers: true };
/** What the job loop gives a pass (src/jobs/loop.ts); the webhook job uses none of it. */
const passContext = { signal: new AbortController().signal, logger: pino({ level: 'silent' }), logError: () => undefined } as unknown as PassContext;

/** The DomainError `fn` throws (fails the test when it throws nothing or something else). */
async function domainError(fn: () => Promise<unknown>): Promise<DomainError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError');
}

describe(`console webhooks (${engineName})`, () => {
  let t: TestApp;
  let dev: NewDeveloper;
  let other: NewDeveloper;
  let rx: Receiver;
  let key: string;
  /** The receiver's keys: the one the console generates is added when it exists. */
  const keys: string[] = [];

  beforeAll(async () => {
    t = await testApp();
    dev = await newDeveloper(t, 'Console hooks');
    other = await newDeveloper(t, 'Other hooks');
    rx = await startReceiver(keys);
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  const worker = (reflect = true) => createWebhookWorker(t.db, { env: 'sandbox', allowPrivateTargets: true, reflectPrivateAnswers: reflect, baseDelayMs: 10, maxDelayMs: 20 });
  async function event(developerId = dev.developer_id, over: { occurred_at?: Date; status?: 'pending' | 'skipped' } = {}): Promise<{ id: string; appointmentId: string }> {
    const id = uuid();
    const appointmentId = uuid();
    await t.db.insertInto('outbox_events').values({
      id, env: 'sandbox', developer_id: developerId, appointment_id: appointmentId, update_type: 'updated',
      changed_attributes: JSON.stringify([{ attribute_path: 'appointment.status' }]), status: over.status ?? 'pending', ...(over.occurred_at ? { occurred_at: over.occurred_at } : {}),
    }).execute();
    return { id, appointmentId };
  }

  it('sets the receiver with a generated key shown once, and never shows a key again', async () => {
    const set = await setReceiver(t.db, 'sandbox', dev.developer_id, { url: rx.url }, out);
    expect(set.url).toBe(rx.url);
    expect(set.generated_key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    key = set.generated_key!;
    keys.push(key);
    const got = await getReceiver(t.db, 'sandbox', dev.developer_id);
    expect(got).toMatchObject({ url: rx.url, previous_key_expires_at: null });
    expect(JSON.stringify(got)).not.toContain(key);
    expect(await getReceiver(t.db, 'sandbox', other.developer_id)).toBeNull();
  });

  it('refuses a bad URL or key by field, an unknown developer as not found, and a private URL where private targets are not allowed', async () => {
    const bad = await domainError(() => setReceiver(t.db, 'sandbox', dev.developer_id, { url: 'ftp://x.example/', key: 'not base64!' }, out));
    expect(bad.kind).toBe('invalid');
    expect(bad.errors.map((e) => e.field).sort()).toEqual(['key', 'url']);
    const metadata = await domainError(() => setReceiver(t.db, 'sandbox', dev.developer_id, { url: 'http://169.254.169.254/' }, out));
    expect(metadata.errors[0]).toMatchObject({ field: 'url' });
    const priv = await domainError(() => setReceiver(t.db, 'sandbox', dev.developer_id, { url: 'http://127.0.0.1:9/x' }, { allowPrivateTargets: false }));
    expect(priv.errors[0]).toMatchObject({ field: 'url' });
    expect((await domainError(() => setReceiver(t.db, 'sandbox', 'dv_nobody', { url: 'https://hooks.example.org/' }, out))).kind).toBe('not_found');
    expect((await domainError(() => setReceiver(t.db, 'production', dev.developer_id, { url: 'https://hooks.example.org/' }, out))).kind).toBe('not_found');
  });

  it('sends a signed test event at once, verified with the generated key, and records it in the log', async () => {
    rx.answer = 'thanks';
    const res = await sendTestEvent(t.db, 'sandbox', dev.developer_id, out);
    expect(res).toMatchObject({ delivered: true, status_code: 200, error: null, response_excerpt: 'thanks', answer_withheld: false });
    const got = rx.received.at(-1)!;
    expect(got.verifiedWith).toEqual([key]);
    expect(got.headers['webhook-id']).toBe(res.event_id);
    expect(got.body).toMatchObject({ event_type: 'test', data: { data_type: 'test_data', test_data: { event_id: res.event_id, developer_id: dev.developer_id } } });
    const [first] = (await deliveryLog(t.db, 'sandbox', dev.developer_id, {})).deliveries;
    expect(first).toMatchObject({ event_id: res.event_id, event_kind: 'test', appointment_id: null, update_type: null, event_status: 'delivered', attempt: 1, status_code: 200, response_excerpt: 'thanks' });
    expect((await domainError(() => sendTestEvent(t.db, 'sandbox', other.developer_id, out))).kind).toBe('conflict');
  });

  it('keeps only the first 256 bytes of a longer answer, in whole characters, and never the body sent', async () => {
    rx.answer = 'é'.repeat(200) + 'TAIL-NEVER-KEPT';
    const { id } = await event();
    expect(await worker().runOnce()).toBe(1);
    const [row] = (await deliveryLog(t.db, 'sandbox', dev.developer_id, { page_size: 1 })).deliveries;
    expect(row!.event_id).toBe(id);
    expect(Buffer.byteLength(row!.response_excerpt!)).toBe(256);
    expect(row!.response_excerpt).toBe('é'.repeat(128));
    const stored = await t.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain('appointment_updated');
    // A cut multi-byte character is dropped, not stored as a replacement character.
    rx.answer = 'a' + 'é'.repeat(200);
    await event();
    await worker().runOnce();
    const [cut] = (await deliveryLog(t.db, 'sandbox', dev.developer_id, { page_size: 1 })).deliveries;
    expect(cut!.response_excerpt).toBe('a' + 'é'.repeat(127));
    // NUL and invalid bytes (which a text column cannot hold as they are) are stored replaced, still within 256 bytes.
    rx.answer = Buffer.from(Array.from({ length: 400 }, (_, i) => [0x00, 0xff, 0x41][i % 3]!));
    const binary = await event();
    await worker().runOnce();
    const [bin] = (await deliveryLog(t.db, 'sandbox', dev.developer_id, { page_size: 1 })).deliveries;
    expect(bin!.event_id).toBe(binary.id);
    expect(bin!.response_excerpt).not.toContain('\u0000');
    expect(bin!.response_excerpt!.startsWith('\ufffd\ufffdA')).toBe(true);
    expect(Buffer.byteLength(bin!.response_excerpt!)).toBeLessThanOrEqual(256);
    rx.answer = 'ok';
  });

  it("withholds a private receiver's answer (status, error and excerpt) where such answers may not be shown", async () => {
    rx.plan = [404];
    rx.answer = 'internal secret page';
    const { id } = await event();
    await worker(false).runOnce();
    const [row] = (await deliveryLog(t.db, 'sandbox', dev.developer_id, { page_size: 1 })).deliveries;
    expect(row).toMatchObject({ event_id: id, status_code: null, response_excerpt: null, error: WITHHELD_ERROR, answer_withheld: true, event_status: 'failed' });
    const test = await sendTestEvent(t.db, 'sandbox', dev.developer_id, { allowPrivateTargets: true, reflectPrivateAnswers: false });
    expect(test).toMatchObject({ delivered: true, status_code: null, response_excerpt: null, answer_withheld: true });
    rx.answer = 'ok';
  });

  it('the delivery job shows private answers only for a sandbox on a loopback address', async () => {
    expect([isLocalSandbox('sandbox', '127.0.0.1'), isLocalSandbox('sandbox', '::1'), isLocalSandbox('sandbox', '0.0.0.0'), isLocalSandbox('production', '127.0.0.1')]).toEqual([true, true, false, false]);
    rx.answer = 'shown or not';
    for (const host of ['127.0.0.1', '0.0.0.0']) {
      const { id } = await event();
      await webhookDeliveryJob({ db: t.db, config: { ...t.config, host, allowPrivateWebhookTargets: true }, engine: t.handle.engine }).pass(passContext);
      const [row] = (await deliveryLog(t.db, 'sandbox', dev.developer_id, { page_size: 1 })).deliveries;
      expect(row!.event_id).toBe(id);
      expect(row!.response_excerpt).toBe(host === '127.0.0.1' ? 'shown or not' : null);
    }
    rx.answer = 'ok';
  });

  it('filters by appointment and event status, pages newest first, and names a bad filter', async () => {
    rx.plan = [400];
    const failed = await event();
    await worker().runOnce();
    const ok = await event();
    await worker().runOnce();
    const byAppointment = await deliveryLog(t.db, 'sandbox', dev.developer_id, { appointment_id: failed.appointmentId });
    expect(byAppointment.deliveries.map((d) => d.event_id)).toEqual([failed.id]);
    expect(byAppointment.deliveries[0]).toMatchObject({ status_code: 400, error: 'HTTP 400', event_status: 'failed', update_type: 'updated' });
    const failedOnes = (await deliveryLog(t.db, 'sandbox', dev.developer_id, { status: 'failed' })).deliveries;
    expect(failedOnes.every((d) => d.event_status === 'failed')).toBe(true);
    expect(failedOnes.map((d) => d.event_id)).toContain(failed.id);
    expect(failedOnes.map((d) => d.event_id)).not.toContain(ok.id);
    const all = (await deliveryLog(t.db, 'sandbox', dev.developer_id, { page_size: 500 })).deliveries.map((d) => d.event_id);
    const p1 = await deliveryLog(t.db, 'sandbox', dev.developer_id, { page_size: 3 });
    const p2 = await deliveryLog(t.db, 'sandbox', dev.developer_id, { page_size: 3, cursor: p1.next_cursor! });
    expect([...p1.deliveries, ...p2.deliveries].map((d) => d.event_id)).toEqual(all.slice(0, 6));
    const bad = await domainError(() => deliveryLog(t.db, 'sandbox', dev.developer_id, { status: 'lost', cursor: '!!' }));
    expect(bad.errors.map((e) => e.field).sort()).toEqual(['cursor', 'status']);
    expect((await deliveryLog(t.db, 'sandbox', other.developer_id, {})).deliveries).toEqual([]);
  });

  it('replays one event: the receiver gets it again with the same webhook-id and a valid signature', async () => {
    rx.plan = [500];
    const { id } = await event();
    await worker().runOnce();
    expect((await t.db.selectFrom('outbox_events').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status).toBe('pending');
    await t.db.updateTable('outbox_events').set({ status: 'failed' }).where('id', '=', id).execute();
    const before = rx.received.length;
    expect(await replayDelivery(t.db, 'sandbox', dev.developer_id, id)).toEqual({ event_id: id, status: 'pending' });
    expect(await worker().runOnce()).toBe(1);
    const again = rx.received.slice(before);
    expect(again).toHaveLength(1);
    expect(again[0]!.headers['webhook-id']).toBe(id);
    expect(again[0]!.verifiedWith).toEqual([key]);
    const attempts = (await deliveryLog(t.db, 'sandbox', dev.developer_id, {})).deliveries.filter((d) => d.event_id === id);
    expect(attempts[0]).toMatchObject({ attempt: 1, status_code: 200, event_status: 'delivered' });
    expect(attempts[1]).toMatchObject({ attempt: 1, status_code: 500 });
  });

  it('replays a test event as a test event, through the worker', async () => {
    const sent = await sendTestEvent(t.db, 'sandbox', dev.developer_id, out);
    const before = rx.received.length;
    await replayDelivery(t.db, 'sandbox', dev.developer_id, sent.event_id);
    expect(await worker().runOnce()).toBe(1);
    const [again] = rx.received.slice(before);
    expect(again!.headers['webhook-id']).toBe(sent.event_id);
    expect(again!.verifiedWith).toEqual([key]);
    expect(again!.body).toMatchObject({ event_type: 'test', data: { test_data: { event_id: sent.event_id } } });
  });

  it("refuses another developer's event as not found, and an own change or a waiting event as a conflict", async () => {
    const theirs = await event(other.developer_id);
    await t.db.updateTable('outbox_events').set({ status: 'failed' }).where('id', '=', theirs.id).execute();
    const e = await domainError(() => replayDelivery(t.db, 'sandbox', dev.developer_id, theirs.id));
    expect(e.kind).toBe('not_found');
    expect(e.errors[0]).toMatchObject({ field: 'event_id' });
    expect((await t.db.selectFrom('outbox_events').select('status').where('id', '=', theirs.id).executeTakeFirstOrThrow()).status).toBe('failed');
    expect((await domainError(() => replayDelivery(t.db, 'sandbox', dev.developer_id, 'no-such-event'))).kind).toBe('not_found');
    const own = await event(dev.developer_id, { status: 'skipped' });
    expect((await domainError(() => replayDelivery(t.db, 'sandbox', dev.developer_id, own.id))).kind).toBe('conflict');
    const waiting = await event();
    expect((await domainError(() => replayDelivery(t.db, 'sandbox', dev.developer_id, waiting.id))).kind).toBe('conflict');
    await worker().runOnce();
  });

  it('replays every failed event since a time, and only those, and only the developer’s own', async () => {
    const since = new Date(Date.now() - 60_000);
    const old = await event(dev.developer_id, { occurred_at: new Date(Date.now() - 3600_000) });
    const recent = await event();
    const delivered = await event();
    const theirs = await event(other.developer_id);
    await t.db.updateTable('outbox_events').set({ status: 'failed' }).where('id', 'in', [old.id, recent.id, theirs.id]).execute();
    await t.db.updateTable('outbox_events').set({ status: 'delivered' }).where('id', '=', delivered.id).execute();
    // Failed events of earlier tests after `since` come along too.
    const { replayed } = await replayFailedSince(t.db, 'sandbox', dev.developer_id, since);
    expect(replayed).toBeGreaterThanOrEqual(1);
    const status = async (id: string) => (await t.db.selectFrom('outbox_events').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
    expect(await status(recent.id)).toBe('pending');
    expect(await status(old.id)).toBe('failed');
    expect(await status(delivered.id)).toBe('delivered');
    expect(await status(theirs.id)).toBe('failed');
    const before = rx.received.length;
    await worker().runOnce();
    const ids = rx.received.slice(before).map((r) => r.headers['webhook-id']);
    expect(ids).toContain(recent.id);
    expect(ids).not.toContain(theirs.id);
    expect(ids).toHaveLength(replayed);
  });
});
