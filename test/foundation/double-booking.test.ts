import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { generateDirectory } from '../../src/domain/directory/seed.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { createDeveloper } from '../../src/domain/developers/create-developer.js';
import { engineName, freshDatabase } from '../helpers/db.js';

/** The database itself refuses two live holds that overlap on one provider (issue #2 §3). */
describe(`double booking is impossible at the database level (${engineName})`, () => {
  let h: DatabaseHandle;
  let developerId: string;
  let pl: { id: string; provider_id: string; location_id: string };
  let otherProvider: string;

  beforeAll(async () => {
    h = await freshDatabase();
    developerId = (await createDeveloper(h.db, { env: 'sandbox', name: 'd' })).developer_id;
    await h.db.transaction().execute((trx) => writeDirectory(trx, 'sandbox', generateDirectory(3, 7), { developerId }));
    const pls = await h.db.selectFrom('provider_locations').select(['id', 'provider_id', 'location_id']).orderBy('id').execute();
    pl = pls[0]!;
    otherProvider = pls.find((p) => p.provider_id !== pl.provider_id)!.provider_id;
  });
  afterAll(async () => h.close());

  async function appointment(id: string, providerId = pl.provider_id): Promise<void> {
    const patientId = `pa_${id}`;
    await h.db.insertInto('patients').values({
      id: patientId, env: 'sandbox', developer_id: developerId, first_name: 'A', last_name: 'B', date_of_birth: '1990-01-01',
      sex_at_birth: 'female', phone_number: '2125550100', email_address: 'a@example.org', address: JSON.stringify({}),
      insurance: null, gender: null, created_by_user_id: null, developer_patient_id: null,
    }).execute();
    const plRow = providerId === pl.provider_id ? pl : (await h.db.selectFrom('provider_locations').select(['id', 'provider_id', 'location_id']).where('provider_id', '=', providerId).executeTakeFirstOrThrow());
    await h.db.insertInto('appointments').values({
      id, env: 'sandbox', developer_id: developerId, booked_by_client_id: 'cl', booked_by_user_id: null, patient_id: patientId,
      developer_patient_id: null, provider_location_id: plRow.id, provider_id: plRow.provider_id, location_id: plRow.location_id,
      practice_id: null, visit_reason_id: 'pc_x', patient_type: 'new', start_time: '2030-01-07T15:00:00Z', end_time: '2030-01-07T15:30:00Z',
      time_zone: 'UTC', pending_start_time: null, pending_end_time: null, appointment_status: 'pending_booking', confirmation_type: 'auto',
      visit_type: 'in_person', notes: null, cancellation_reason: null, cancellation_reason_type: null, arrived_at: null, evaluate_after: null,
    }).execute();
  }

  const hold = (appointmentId: string, from: string, to: string, providerId = pl.provider_id, kind: 'current' | 'pending' = 'current') =>
    h.db.insertInto('appointment_holds').values({ appointment_id: appointmentId, kind, env: 'sandbox', provider_id: providerId, during: `[${from},${to})` }).execute();

  it('refuses an overlapping range for the same provider with SQLSTATE 23P01', async () => {
    await appointment('ap_1');
    await appointment('ap_2');
    await hold('ap_1', '2030-01-07T15:00:00Z', '2030-01-07T15:30:00Z');
    const err = await hold('ap_2', '2030-01-07T15:15:00Z', '2030-01-07T15:45:00Z').then(() => undefined, (e: unknown) => e);
    expect((err as { code?: string }).code).toBe('23P01');
  });

  it('admits back-to-back ranges, other providers, and a range freed by deleting its hold', async () => {
    await appointment('ap_3');
    await appointment('ap_4', otherProvider);
    await hold('ap_3', '2030-01-07T15:30:00Z', '2030-01-07T16:00:00Z');
    await hold('ap_4', '2030-01-07T15:00:00Z', '2030-01-07T15:30:00Z', otherProvider);
    await h.db.deleteFrom('appointment_holds').where('appointment_id', '=', 'ap_1').execute();
    await hold('ap_2', '2030-01-07T15:00:00Z', '2030-01-07T15:30:00Z');
    const { count } = await h.db.selectFrom('appointment_holds').select(sql<string>`count(*)`.as('count')).executeTakeFirstOrThrow();
    expect(Number(count)).toBe(3);
  });

  it('refuses the overlap when two transactions race for the same time', async () => {
    await appointment('ap_5');
    await appointment('ap_6');
    const results = await Promise.allSettled(
      ['ap_5', 'ap_6'].map((id) =>
        h.db.transaction().execute(async (trx) => {
          await trx.insertInto('appointment_holds').values({ appointment_id: id, kind: 'current', env: 'sandbox', provider_id: pl.provider_id, during: '[2030-01-08T15:00:00Z,2030-01-08T15:30:00Z)' }).execute();
          await new Promise((r) => setTimeout(r, 20));
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
  });
});
