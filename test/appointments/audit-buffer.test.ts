/**
 * Read audit records written in batches (AuditBuffer: one INSERT … SELECT FROM unnest(…) per flush,
 * the same statement for every batch size): every column stored as given, nulls as null, the time
 * of the read kept, batches of one, many and more than `maxBatch` records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditBuffer } from '../../src/domain/appointments/audit-buffer.js';
import { engineName } from '../helpers/db.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';

describe(`read audit buffer (${engineName})`, () => {
  let t: TestApp;
  let developerId: string;
  beforeAll(async () => {
    t = await testApp();
    developerId = (await newDeveloper(t, 'Audit dev')).developer_id;
  });
  afterAll(async () => t.close());

  const rows = (appointmentId: string) =>
    t.db.selectFrom('audit_log').selectAll().where('appointment_id', '=', appointmentId).orderBy('id').execute();

  it('stores every column of each record, with the time it was added', async () => {
    const buffer = new AuditBuffer(t.db, { flushMs: 10_000 });
    const before = Date.now();
    buffer.add({ env: 'sandbox', developer_id: developerId, actor_client_id: 'cl_a', actor_user_id: null, actor_kind: 'client', appointment_id: 'ap-1', action: 'read', request_id: 'req_1' });
    buffer.add({ env: 'sandbox', developer_id: developerId, actor_client_id: 'cl_b', actor_user_id: 'us_x', actor_kind: 'user', appointment_id: 'ap-1', action: 'participants', request_id: null });
    await new Promise((r) => setTimeout(r, 30));
    await buffer.flush();
    const got = await rows('ap-1');
    expect(got.map(({ id: _id, at: _at, ...r }) => r)).toEqual([
      { env: 'sandbox', developer_id: developerId, actor_client_id: 'cl_a', actor_user_id: null, actor_kind: 'client', appointment_id: 'ap-1', action: 'read', request_id: 'req_1' },
      { env: 'sandbox', developer_id: developerId, actor_client_id: 'cl_b', actor_user_id: 'us_x', actor_kind: 'user', appointment_id: 'ap-1', action: 'participants', request_id: null },
    ]);
    for (const r of got) {
      // The read's own time (the flush ran ≥ 30 ms later), to the millisecond.
      expect(new Date(r.at).getTime()).toBeGreaterThanOrEqual(before);
      expect(new Date(r.at).getTime()).toBeLessThan(before + 30);
    }
    await buffer.close();
  });

  it('writes batches of any size, including more than maxBatch at once', async () => {
    const buffer = new AuditBuffer(t.db, { maxBatch: 7, flushMs: 10_000 });
    for (let i = 0; i < 23; i++) {
      buffer.add({ env: 'sandbox', developer_id: developerId, actor_client_id: 'cl_a', actor_user_id: null, actor_kind: 'client', appointment_id: 'ap-many', action: 'read', request_id: `req_${i}` });
    }
    await buffer.close();
    expect((await rows('ap-many')).map((r) => r.request_id)).toEqual(Array.from({ length: 23 }, (_, i) => `req_${i}`));
  });
});
