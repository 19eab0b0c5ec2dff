/**
 * Practice schedule tests: the scheduling directory (practice `pt_t`), a second practice `pt_o` with
 * a provider at the New York location, and practice callers made by hand (the domain takes any
 * `PracticeCaller`; route tests use real staff tokens).
 */
import { expect } from 'vitest';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { DomainError } from '../../src/domain/errors.js';
import type { addTimeOff } from '../../src/domain/practices/schedule/time-off.js';
import type { PracticeCaller } from '../../src/domain/practices/schedule/scope.js';
import { schedulingEnv, type SchedulingEnv } from '../appointments/fixtures.js';

export const OTHER_PL = 'pr_o|lo_ny';

/** A staff member of practice `pt_t` (or another practice). */
export function staff(over: Partial<PracticeCaller> = {}): PracticeCaller {
  return { env: 'sandbox', practiceId: 'pt_t', userId: 'us_staff', role: 'practice_staff', providerId: null, ...over };
}

/** The scheduling environment plus practice `pt_o` with provider-location `OTHER_PL`. */
export async function practiceScheduleEnv(): Promise<SchedulingEnv> {
  const e = await schedulingEnv();
  await e.t.db.transaction().execute((trx) =>
    writeDirectory(trx, 'sandbox', {
      practices: [{ id: 'pt_o', name: 'Other practice' }],
      providers: [{
        id: 'pr_o', npi: '1234567893', practice_id: 'pt_o', first_name: 'Other', last_name: 'Doc', main_specialty_id: 'sp_t',
        specialty_ids: ['sp_t'], default_visit_reason_id: 'pc_t30', visit_reason_ids: ['pc_t30'],
      }],
      provider_locations: [{ provider_id: 'pr_o', location_id: 'lo_ny', weekly_schedule: [{ weekday: 1, start: '08:00', end: '18:00' }] }],
    }, { developerId: e.dev.developer_id }),
  );
  return e;
}

/** Local start times (`HH:MM`) of a list of slots. */
export const hhmm = (slots: { start_time: string }[]): string[] => slots.map((s) => s.start_time.slice(11, 16));

/**
 * Checks how staff closing a day (`addTimeOff`'s answer or error, `off`) ended against the
 * appointments that landed in the day meanwhile (docs/scheduling.md, "Races"): refused as a
 * `conflict` (only without `allow`), listing appointments that landed, each committed before it
 * (others may land after its refusal: the day stays open); or saved, listing exactly those that
 * landed when allowed, and with none landed otherwise.
 */
export function timeOffOutcome(off: unknown, allow: boolean, landed: string[], label = ''): 'saved' | 'refused' {
  if (off instanceof DomainError) {
    expect(allow, label).toBe(false);
    expect(off.kind, label).toBe('conflict');
    const listed = off.errors.map((x) => /appointment (\S+) /.exec(x.message)![1]!);
    expect(listed.length, label).toBeGreaterThan(0);
    for (const id of listed) expect(landed, label).toContain(id);
    return 'refused';
  }
  const saved = off as Awaited<ReturnType<typeof addTimeOff>>;
  expect(saved.saved, label).toBe(true);
  expect(saved.stranded.map((x) => x.appointment_id).sort(), label).toEqual(allow ? landed : []);
  if (!allow) expect(landed, label).toEqual([]);
  return 'saved';
}
