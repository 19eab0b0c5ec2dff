/**
 * The scheduling directory of test/appointments/fixtures.ts (practice `pt_t`) plus a second practice
 * `pt_o` with provider `pr_o` at the New York location, every provider-location in the booking
 * developer's directory; staff principals built directly for domain tests.
 */
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { ensureSandboxFixtures } from '../../src/domain/directory/sandbox-fixtures.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { PRACTICE_SCOPES, ROLE_SCOPES, type StaffPrincipal } from '../../src/domain/practices/staff-principal.js';
import { uuid } from '../../src/lib/ids.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';
import { book, nyDate, schedulingDirectory, slots } from '../appointments/fixtures.js';

export const OTHER_PL = 'pr_o|lo_ny';

export interface PracticeEnv {
  t: TestApp;
  dev: NewDeveloper;
  token: string;
  close(): Promise<void>;
}

/** `beforeReady` may register more routes on the app before its first request boots it. */
export async function practiceEnv(opts: { beforeReady?: (t: TestApp) => Promise<void> } = {}): Promise<PracticeEnv> {
  const t = await testApp();
  await opts.beforeReady?.(t);
  const dev = await newDeveloper(t, 'Booking app');
  const doc = schedulingDirectory();
  doc.practices!.push({ id: 'pt_o', name: 'Other practice' });
  const everyDay = [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, start: '08:00', end: '18:00' }));
  doc.providers!.push({
    id: 'pr_o', npi: '1234567893', practice_id: 'pt_o', first_name: 'Other', last_name: 'Doc', main_specialty_id: 'sp_t',
    specialty_ids: ['sp_t'], default_visit_reason_id: 'pc_t30', visit_reason_ids: ['pc_t30', 'pc_t60'],
  });
  doc.provider_locations!.push({ provider_id: 'pr_o', location_id: 'lo_ny', weekly_schedule: everyDay, confirmation_type: 'manual' });
  await t.db.transaction().execute(async (trx) => {
    await writeDirectory(trx, 'sandbox', doc, { developerId: dev.developer_id });
    await ensureSandboxFixtures(trx);
  });
  return { t, dev, token: await clientToken(t, dev), close: () => t.close() };
}

/** A staff principal of `practiceId` as the practice guard would set it. */
export function staffOf(practiceId: string, role: StaffPrincipal['role'] = 'practice_staff', providerId: string | null = null): StaffPrincipal {
  return {
    env: 'sandbox', userId: uuid(), practiceId, role, providerId, clientId: 'practice-workspace',
    scopes: new Set(role === 'provider' ? ROLE_SCOPES.provider : PRACTICE_SCOPES.filter((s) => ROLE_SCOPES[role].includes(s))),
  };
}

/** Books slot `index` of day `days` ahead at `pl` through /v1; returns the appointment id and start. */
export async function bookAt(e: PracticeEnv, pl: string, days: number, index: number, over: Record<string, unknown> = {}): Promise<{ id: string; start: string }> {
  const day = await slots(e, pl, { start: nyDate(days), end: nyDate(days) });
  const start = day[index]!.start_time;
  const res = await book(e, pl, start, over);
  if (res.statusCode !== 200) throw new Error(`booking at ${pl}: ${res.statusCode} ${res.body}`);
  return { id: res.json().data.appointment_id as string, start };
}

export { bearer, nyDate, slots };
