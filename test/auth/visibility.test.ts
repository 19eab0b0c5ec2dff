/** docs/api/auth.md#who-sees-which-appointments, enforced by `src/domain/appointments/visibility.ts`. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import type { Principal } from '../../src/domain/credentials/principal.js';
import { appointmentVisibleTo, visibleAppointments } from '../../src/domain/appointments/visibility.js';
import { createDeveloper } from '../../src/domain/developers/create-developer.js';
import { ensureSandboxFixtures } from '../../src/domain/directory/sandbox-fixtures.js';
import { createUser } from '../../src/domain/users/create-user.js';
import { freshDatabase } from '../helpers/db.js';

describe('appointment visibility', () => {
  let h: DatabaseHandle;
  let devA: string;
  let devB: string;
  let alice: string;
  let bob: string;
  const scopes = new Set<string>();
  const client = (developerId: string, clientId = 'cl_x'): Principal => ({ kind: 'client', env: 'sandbox', developerId, clientId, scopes });
  const user = (developerId: string, userId: string): Principal => ({ kind: 'user', env: 'sandbox', developerId, clientId: 'uc_x', scopes, userId, role: 'patient', providerId: null });

  beforeAll(async () => {
    h = await freshDatabase();
    await h.db.transaction().execute((trx) => ensureSandboxFixtures(trx));
    const a = await createDeveloper(h.db, { env: 'sandbox', name: 'A' });
    const b = await createDeveloper(h.db, { env: 'sandbox', name: 'B' });
    devA = a.developer_id;
    devB = b.developer_id;
    alice = (await createUser(h.db, { env: 'sandbox', email: 'alice@example.com', password: 'password-alice', role: 'patient' })).user_id;
    bob = (await createUser(h.db, { env: 'sandbox', email: 'bob@example.com', password: 'password-bob', role: 'patient' })).user_id;
    let n = 0;
    const book = async (id: string, developerId: string, clientId: string, userId: string | null) => {
      const patient = `pa_${id}`;
      await h.db.insertInto('patients').values({
        id: patient, env: 'sandbox', developer_id: developerId, created_by_user_id: userId, developer_patient_id: null, first_name: 'P', last_name: 'Q',
        date_of_birth: '1990-01-01', sex_at_birth: 'female', phone_number: '2125550100', email_address: 'p@example.com', address: {}, insurance: null, gender: null,
      }).execute();
      const start = new Date(Date.UTC(2030, 0, 1, 9 + n++));
      await h.db.insertInto('appointments').values({
        id, env: 'sandbox', developer_id: developerId, booked_by_client_id: clientId, booked_by_user_id: userId, patient_id: patient, developer_patient_id: null,
        provider_location_id: 'pr_pending|lo_pending', provider_id: 'pr_pending', location_id: 'lo_pending', practice_id: null, visit_reason_id: 'pc_sandbox_visit',
        patient_type: 'new', start_time: start, end_time: new Date(start.getTime() + 30 * 60_000), time_zone: 'America/New_York', pending_start_time: null,
        pending_end_time: null, appointment_status: 'pending_booking', confirmation_type: 'auto', visit_type: 'in_person', notes: null, cancellation_reason: null,
        cancellation_reason_type: null, arrived_at: null, evaluate_after: null,
      }).execute();
    };
    await book('a-m2m-1', devA, a.client_id, null);
    await book('a-m2m-2', devA, 'cl_other_machine_of_a', null);
    await book('a-alice', devA, a.user_client_id, alice);
    await book('a-bob', devA, a.user_client_id, bob);
    await book('b-m2m', devB, b.client_id, null);
    await book('b-alice', devB, b.user_client_id, alice);
  });
  afterAll(async () => h?.close());

  const ids = async (p: Principal) => (await visibleAppointments(h.db, p).select('id').orderBy('id').execute()).map((r) => r.id);

  it("a machine credential sees every machine-booked appointment of its developer, no user's and no other developer's", async () => {
    expect(await ids(client(devA))).toEqual(['a-m2m-1', 'a-m2m-2']);
    expect(await ids(client(devA, 'cl_another'))).toEqual(['a-m2m-1', 'a-m2m-2']);
    expect(await ids(client(devB))).toEqual(['b-m2m']);
  });

  it('a user sees only what that user booked, through that developer', async () => {
    expect(await ids(user(devA, alice))).toEqual(['a-alice']);
    expect(await ids(user(devA, bob))).toEqual(['a-bob']);
    expect(await ids(user(devB, alice))).toEqual(['b-alice']);
  });

  it('an anonymous token sees nothing; another environment sees nothing', async () => {
    expect(await ids({ kind: 'anonymous', env: 'sandbox', developerId: devA, clientId: 'uc_x', scopes, subject: 'an_1' })).toEqual([]);
    expect(await ids({ ...client(devA), env: 'production' })).toEqual([]);
  });

  it('the same condition restricts updates', async () => {
    const res = await h.db
      .updateTable('appointments')
      .set({ notes: 'touched' })
      .where(appointmentVisibleTo(user(devA, bob)))
      .where('id', 'in', ['a-alice', 'a-bob'])
      .executeTakeFirst();
    expect(Number(res.numUpdatedRows)).toBe(1);
    const touched = await h.db.selectFrom('appointments').select('id').where('notes', '=', 'touched').execute();
    expect(touched.map((r) => r.id)).toEqual(['a-bob']);
  });
});
