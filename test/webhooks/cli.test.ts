import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuid } from '../../src/lib/ids.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { startReceiver } from './receiver.js';
import { scaled } from '../helpers/scale.js';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '../../bin/carebook.mjs');

describe('carebook webhook set | deliveries | replay (through a running service)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(async () => t.close());

  it('sets the receiver, lists what was sent and replays it', async () => {
    const url = await t.listen();
    const dev = await newDeveloper(t);
    const key = randomBytes(16).toString('base64');
    const rx = await startReceiver([key]);
    const cli = (...args: string[]) => run(process.execPath, [BIN, '--url', url, '--admin-token', 'test-admin-token-0123456789abcdefgh', 'webhook', ...args], { timeout: scaled(30_000) });
    try {
      await cli('set', '--developer', dev.developer_id, '--url', rx.url, '--key', key);
      const eventId = uuid();
      await t.db.insertInto('outbox_events').values({ id: eventId, env: 'sandbox', developer_id: dev.developer_id, appointment_id: uuid(), update_type: 'updated', changed_attributes: JSON.stringify([{ attribute_path: 'appointment.status' }]) }).execute();
      const { createWebhookWorker } = await import('../../src/webhooks/worker.js');
      await createWebhookWorker(t.db, { env: 'sandbox', allowPrivateTargets: true }).runOnce();
      const listed = JSON.parse((await cli('deliveries', '--developer', dev.developer_id, '--json')).stdout);
      expect(listed[0]).toMatchObject({ event_id: eventId, status_code: 200, attempt: 1 });
      const replayed = await cli('replay', '--developer', dev.developer_id, '--since', '2020-01-01T00:00:00Z');
      expect(replayed.stdout).toContain('1 event(s)');
      const bad = await cli('replay', '--developer', dev.developer_id, '--since', 'yesterday').then(() => undefined, (e: { code: number; stderr: string }) => e);
      expect(bad?.code).not.toBe(0);
      expect(bad?.stderr).toContain('ISO-8601');
    } finally {
      await rx.close();
    }
    // Four CLI processes, each compiling the sources through tsx: slow on a loaded machine.
  }, scaled(120_000));
});
