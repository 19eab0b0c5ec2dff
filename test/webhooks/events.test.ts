/**
 * What an outbox event carries and records (docs/api/webhooks.md#event-body; issue #5 §1–2): `changed_attributes` with an
 * upload's `attachment_type`, events that found no receiver (replayable, unlike the developer's own
 * changes), the tenant columns of every delivery record, and migration 0006 on rows of the old shape.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as m0006 from '../../src/db/migrations/0006_webhook_events.js';
import { uuid } from '../../src/lib/ids.js';
import { setWebhookEndpoint } from '../../src/webhooks/endpoints.js';
import { createWebhookWorker } from '../../src/webhooks/worker.js';
import { book, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from '../appointments/fixtures.js';
import { multipart, PDF } from '../attachments/files.js';
import { newDeveloper } from '../helpers/app.js';
import { bearer } from '../helpers/auth.js';
import { startReceiver } from './receiver.js';

const admin = { authorization: 'Bearer test-admin-token-0123456789abcdefgh' };
const key = () => randomBytes(32).toString('base64');

describe('webhook events: attributes, receivers and records', () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv();
  });
  afterAll(async () => e.close());

  const worker = () => createWebhookWorker(e.t.db, { env: 'sandbox', allowPrivateTargets: true, baseDelayMs: 20, maxDelayMs: 100 });
  const row = (id: string) => e.t.db.selectFrom('outbox_events').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  async function pendingEvent(changed: unknown[]): Promise<string> {
    const id = uuid();
    await e.t.db
      .insertInto('outbox_events')
      .values({ id, env: 'sandbox', developer_id: e.dev.developer_id, appointment_id: uuid(), update_type: 'updated', changed_attributes: JSON.stringify(changed) })
      .execute();
    return id;
  }

  it('an upload records patient.uploaded_attachments with its attachment_type (skipped: the developer made it)', async () => {
    const free = await slots(e, PL.ny, { start: nyDate(3), end: nyDate(3) });
    const appointmentId = (await book(e, PL.ny, free[0]!.start_time)).json().data.appointment_id;
    const m = multipart({ attachment_type: 'pcp_patient_referral' }, [{ name: 'attachment', filename: 'r.pdf', contentType: 'application/pdf', content: PDF }]);
    const res = await e.t.app.inject({ method: 'POST', url: `/v1/appointments/${appointmentId}/attachments`, headers: { ...bearer(e.token), 'content-type': m.contentType }, payload: m.body });
    expect(res.statusCode).toBe(200);
    const events = await e.t.db.selectFrom('outbox_events').select(['changed_attributes', 'status']).where('appointment_id', '=', appointmentId).orderBy('occurred_at', 'desc').execute();
    expect(events[0]).toEqual({ changed_attributes: [{ attribute_path: 'patient.uploaded_attachments', attachment_type: 'pcp_patient_referral' }], status: 'skipped' });
    // An own-call change is never replayed.
    const replay = await e.t.app.inject({ method: 'POST', url: '/admin/v1/webhook-replays', headers: admin, payload: { developer_id: e.dev.developer_id, since: '2020-01-01T00:00:00Z' } });
    expect(replay.json()).toEqual({ replayed: 0 });
  });

  it('an event without a receiver is marked no_endpoint (not skipped) and a replay sends it once one is set', async () => {
    const id = await pendingEvent([{ attribute_path: 'appointment.status' }]);
    await worker().runOnce();
    expect(await row(id)).toMatchObject({ status: 'no_endpoint', attempts: 0 });
    const k = key();
    const rx = await startReceiver([k]);
    try {
      await setWebhookEndpoint(e.t.db, { env: 'sandbox', developerId: e.dev.developer_id, url: rx.url, key: k, allowPrivateTargets: true });
      const replay = await e.t.app.inject({ method: 'POST', url: '/admin/v1/webhook-replays', headers: admin, payload: { developer_id: e.dev.developer_id, since: '2020-01-01T00:00:00Z' } });
      expect(replay.statusCode).toBe(202);
      expect(replay.json()).toEqual({ replayed: 1 });
      await worker().runOnce();
      expect((await row(id)).status).toBe('delivered');
      expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([id]);
    } finally {
      await rx.close();
    }
  });

  it('marks every receiverless event of a pass no_endpoint in the claim itself, beside the deliveries of the same pass', async () => {
    const quiet = await newDeveloper(e.t, 'No receiver');
    const heard = await newDeveloper(e.t, 'With receiver');
    // Events other tests left pending (a retry to a receiver they closed) wait out this pass.
    await e.t.db.updateTable('outbox_events').set({ next_attempt_at: new Date(Date.now() + 86_400_000) }).where('status', '=', 'pending').execute();
    const event = async (developerId: string) => {
      const id = uuid();
      await e.t.db.insertInto('outbox_events').values({ id, env: 'sandbox', developer_id: developerId, appointment_id: uuid(), update_type: 'updated', changed_attributes: '[]' }).execute();
      return id;
    };
    const k = key();
    const rx = await startReceiver([k]);
    try {
      await setWebhookEndpoint(e.t.db, { env: 'sandbox', developerId: heard.developer_id, url: rx.url, key: k, allowPrivateTargets: true });
      const unheard = [];
      for (let i = 0; i < 5; i++) unheard.push(await event(quiet.developer_id));
      const sent = [await event(heard.developer_id), await event(heard.developer_id)];
      // Every statement the worker sends in the pass, by kind.
      const statements: string[] = [];
      const counting = e.t.db.withPlugin({
        transformQuery: (args) => (statements.push(args.node.kind), args.node),
        transformResult: async (args) => args.result,
      });
      expect(await createWebhookWorker(counting, { env: 'sandbox', allowPrivateTargets: true }).runOnce()).toBe(7);
      for (const id of unheard) expect(await row(id)).toMatchObject({ status: 'no_endpoint', attempts: 0, locked_until: null, last_error: 'no webhook endpoint registered' });
      for (const id of sent) expect(await row(id)).toMatchObject({ status: 'delivered', attempts: 1 });
      expect(rx.received.map((r) => r.headers['webhook-id']).sort()).toEqual([...sent].sort());
      // The claim (which reads the receivers and settles the five receiverless events), and one
      // statement per delivery (its attempt and the event's new state).
      expect(statements.length).toBe(1 + 2);
    } finally {
      await rx.close();
    }
  });

  it('sends attachment_type, lists it, and records every attempt with the tenant (env, developer_id) and no body', async () => {
    const k = key();
    const rx = await startReceiver([k]);
    try {
      await setWebhookEndpoint(e.t.db, { env: 'sandbox', developerId: e.dev.developer_id, url: rx.url, key: k, allowPrivateTargets: true });
      const changed = [{ attribute_path: 'patient.uploaded_attachments', attachment_type: 'community_care_packet' }];
      const id = await pendingEvent(changed);
      await worker().runOnce();
      const got = rx.received.find((r) => r.headers['webhook-id'] === id)!;
      expect(got.verifiedWith).toEqual([k]);
      expect((got.body as { data: { appointment_data: { changed_attributes: unknown } } }).data.appointment_data.changed_attributes).toEqual(changed);
      const records = await e.t.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', id).execute();
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ env: 'sandbox', developer_id: e.dev.developer_id, status_code: 200 });
      const list = await e.t.app.inject({ url: `/admin/v1/webhook-deliveries?developer_id=${e.dev.developer_id}`, headers: admin });
      expect(list.json().data.find((d: { event_id: string }) => d.event_id === id)).toMatchObject({ changed_attributes: changed, event_status: 'delivered' });
    } finally {
      await rx.close();
    }
  });

  it('migration 0006 converts rows of the old shape (paths, two-key endpoints, no-receiver skips, deliveries)', async () => {
    const db = e.t.db;
    const raw = db as unknown as Kysely<unknown>;
    const dev = (await newDeveloper(e.t, 'Migration developer')).developer_id;
    await m0006.down(raw);
    try {
      const [a, b] = [uuid(), uuid()];
      await sql`INSERT INTO outbox_events (id, env, developer_id, appointment_id, update_type, changed_attributes, status, last_error)
        VALUES (${a}, 'sandbox', ${dev}, ${uuid()}, 'updated', ARRAY['appointment.status', 'appointment.start_time'], 'skipped', 'no webhook endpoint registered'),
               (${b}, 'sandbox', ${dev}, ${uuid()}, 'created', '{}', 'skipped', NULL)`.execute(db);
      await sql`INSERT INTO webhook_deliveries (event_id, attempt, url, latency_ms) VALUES (${a}, 1, 'http://127.0.0.1:9/x', 3)`.execute(db);
      await sql`INSERT INTO webhook_endpoints (developer_id, env, url, keys, updated_at) VALUES (${dev}, 'sandbox', 'http://127.0.0.1:9/x', ARRAY['bmV3', 'b2xk'], '2026-01-01T00:00:00Z')`.execute(db);
    } finally {
      await m0006.up(raw);
    }
    const events = await db.selectFrom('outbox_events').select(['changed_attributes', 'status', 'update_type']).where('developer_id', '=', dev).orderBy('update_type').execute();
    expect(events).toEqual([
      { update_type: 'created', changed_attributes: [], status: 'skipped' },
      { update_type: 'updated', changed_attributes: [{ attribute_path: 'appointment.status' }, { attribute_path: 'appointment.start_time' }], status: 'no_endpoint' },
    ]);
    expect(await db.selectFrom('webhook_deliveries').select(['env', 'developer_id']).where('developer_id', '=', dev).execute()).toEqual([{ env: 'sandbox', developer_id: dev }]);
    const endpoint = await db.selectFrom('webhook_endpoints').select(['key', 'previous_key', 'previous_key_expires_at']).where('developer_id', '=', dev).executeTakeFirstOrThrow();
    expect(endpoint).toEqual({ key: 'bmV3', previous_key: 'b2xk', previous_key_expires_at: new Date('2026-01-02T00:00:00Z') });
  });
});
