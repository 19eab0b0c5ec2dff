/**
 * The hot-path reader of `GET /v1/appointments/{id}` (VisibleRecordReader: one JSON array per row,
 * timestamps as epoch milliseconds) returns exactly the row `findVisible` (Kysely, one column per
 * field) returns, for every principal kind, across zones, nulls and a cancelled appointment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppointment, type CreateInput } from '../../src/domain/appointments/create.js';
import { findVisible, VisibleRecordReader } from '../../src/domain/appointments/record.js';
import type { Principal } from '../../src/domain/credentials/principal.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { bookVariedRecords, createBody, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from './fixtures.js';

describe(`appointment record reader (${engineName})`, () => {
  let e: SchedulingEnv;
  const ids: string[] = [];
  beforeAll(async () => {
    e = await schedulingEnv();
    ids.push(...(await bookVariedRecords(e, [[PL.ny, { notes: 'Bring the referral letter' }], [PL.phx, { developer_patient_id: 'dp-1' }], [PL.hnl, {}]], 2)));
  });
  afterAll(async () => e.close());

  const base = () => ({ env: 'sandbox' as const, developerId: e.dev.developer_id, clientId: 'cl_x', scopes: new Set<never>() });

  it('equals findVisible field for field (Dates to the millisecond, nulls as null)', async () => {
    const reader = new VisibleRecordReader(e.t.db);
    const p = { ...base(), kind: 'client' } as unknown as Principal;
    for (const id of ids) {
      const fast = await reader.find(p, id);
      const slow = await findVisible(e.t.db, p, id);
      expect(slow).toBeDefined();
      expect(fast).toStrictEqual(slow);
    }
  });

  it('the row a booking returns (one JSON array from RETURNING) equals findVisible field for field', async () => {
    const p = { ...base(), kind: 'client' } as unknown as Principal;
    for (const [pl, over] of [
      [PL.ny, { notes: 'Returned row' }],
      [PL.manual, { developer_patient_id: 'dp-2' }],
    ] as const) {
      const day = await slots(e, pl, { start: nyDate(6), end: nyDate(6) });
      const body = createBody(pl, day[1]!.start_time, over);
      const created = await createAppointment(e.t.db, p, body as unknown as CreateInput);
      const read = await findVisible(e.t.db, p, created.id);
      expect(read).toBeDefined();
      expect(created).toStrictEqual(read);
    }
  });

  it('applies the visibility rule of each principal kind', async () => {
    const reader = new VisibleRecordReader(e.t.db);
    const user = { ...base(), kind: 'user', userId: 'us_nobody', role: 'patient', providerId: null } as unknown as Principal;
    const anon = { ...base(), kind: 'anonymous', subject: 'anon' } as unknown as Principal;
    const otherDev = { ...base(), developerId: e.other.developer_id, kind: 'client' } as unknown as Principal;
    for (const p of [user, anon, otherDev]) {
      expect(await reader.find(p, ids[0]!)).toBeUndefined();
      expect(await findVisible(e.t.db, p, ids[0]!)).toBeUndefined();
    }
  });

  it('GET answers the same record as the list', async () => {
    const list = (await e.t.app.inject({ url: '/v1/appointments?page_size=100', headers: bearer(e.token) })).json().data as { appointment_id: string }[];
    for (const id of ids) {
      const one = await e.t.app.inject({ url: `/v1/appointments/${id}`, headers: bearer(e.token) });
      expect(one.statusCode).toBe(200);
      expect(one.json().data).toStrictEqual(list.find((r) => r.appointment_id === id));
    }
  });
});
