import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startService } from '../../src/server.js';
import { setWebhookEndpoint } from '../../src/webhooks/endpoints.js';
import { book, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from '../appointments/fixtures.js';
import { TEST_KEY_ENCRYPTION_KEY, testPort } from '../helpers/app.js';
import { startReceiver } from './receiver.js';
import { scaled } from '../helpers/scale.js';

const admin = { authorization: 'Bearer test-admin-token-0123456789abcdefgh' };

/** Real service processes' workers over one database, a receiver that is down, then up. */
describe('webhooks end to end: only changes the developer did not make, delivered across a service restart', () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv();
  });
  afterAll(async () => e.close());

  it('does not send the developer its own booking, sends the operator move, and delivers it after a restart mid-retry', async () => {
    const key = randomBytes(32).toString('base64');
    const rxPort = testPort();
    await setWebhookEndpoint(e.t.db, { env: 'sandbox', developerId: e.dev.developer_id, url: `http://127.0.0.1:${rxPort}/hook`, key, allowPrivateTargets: true });
    const free = await slots(e, PL.manual, { start: nyDate(2), end: nyDate(2) });
    const booked = await book(e, PL.manual, free[0]!.start_time);
    expect(booked.statusCode).toBe(200);
    const id = booked.json().data.appointment_id;

    const moved = await e.t.app.inject({ method: 'POST', url: `/admin/v1/appointments/${id}/transition`, headers: admin, payload: { to: 'confirmed' } });
    expect(moved.statusCode).toBe(200);
    const events = await e.t.db.selectFrom('outbox_events').select(['id', 'status', 'update_type']).where('appointment_id', '=', id).orderBy('occurred_at').execute();
    expect(events.map((x) => x.status)).toEqual(['skipped', 'pending']);
    const eventId = events[1]!.id;

    // First service run: the receiver is down, the attempt fails and is scheduled again.
    const config = loadConfig({ PORT: String(testPort()), LOG_LEVEL: 'silent', WEBHOOK_RETRY_BASE_MS: '50', WORKER_POLL_MS: '20', DATA_DIR: '/nonexistent-not-used', KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY });
    const first = await startService(config, { handle: e.t.handle, quiet: true });
    const until = async (cond: () => Promise<boolean>) => {
      const end = Date.now() + scaled(15_000);
      while (!(await cond())) {
        if (Date.now() > end) throw new Error('timed out');
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    const row = () => e.t.db.selectFrom('outbox_events').select(['status', 'attempts']).where('id', '=', eventId).executeTakeFirstOrThrow();
    await until(async () => (await row()).attempts >= 1);
    await first.close();
    expect((await row()).status).toBe('pending');

    // The receiver comes up; a new service process on the same database delivers the event.
    const rx = await startReceiver([key], rxPort);
    try {
      const second = await startService({ ...config, port: testPort() }, { handle: e.t.handle, quiet: true });
      await until(async () => (await row()).status === 'delivered');
      await second.close();
      const got = rx.received.filter((r) => r.headers['webhook-id'] === eventId);
      expect(got.length).toBeGreaterThanOrEqual(1);
      expect(got[0]!.verifiedWith).toEqual([key]);
      expect(got[0]!.body).toMatchObject({ data: { appointment_data: { appointment_id: id, appointment_update_type: 'updated', changed_attributes: [{ attribute_path: 'appointment.status' }] } } });
      // The developer's own booking was never sent.
      expect(rx.received.every((r) => r.headers['webhook-id'] !== events[0]!.id)).toBe(true);
    } finally {
      await rx.close();
    }
  });
});
