/**
 * A provider-location's weekly hours, set by its practice (docs/scheduling.md, "Weekly hours";
 * docs/decisions/0014-practice-workspace.md, "Schedules"). The blocks are those of the directory
 * document (docs/directory-format.md: ISO weekday, local `start` and `end` `HH:MM`, optional visit
 * reasons and patient type), checked by the same rules as an import, and replace the stored ones
 * the way an import does. A later import of the same provider-location replaces them again: the
 * directory is the operator's authority over weekly hours.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { invalidFields, type FieldError } from '../../errors.js';
import type { PatientType } from '../../patient-type.js';
import { practiceProviderLocation, type PracticeCaller } from './scope.js';
import { scheduleChange, type ScheduleChangeOutcome } from './stranded.js';

/** One weekly block, as in the directory document's `weekly_schedule`. */
export interface WeeklyHoursBlock {
  weekday: number;
  start: string;
  end: string;
  visit_reason_ids?: string[] | undefined;
  patient_type?: PatientType | undefined;
}

/** At most this many blocks per provider-location (the directory document's limit). */
export const MAX_WEEKLY_BLOCKS = 500;

const HHMM = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;

/**
 * The errors of `hours` past its schema: order of each block, and visit reasons that exist (the
 * import's rules). Safe on raw, unvalidated input (docs/api/errors.md, "Validation"): what is not the
 * right shape is left to the schema's errors.
 */
export async function hoursErrors(db: Kysely<Database>, env: PracticeCaller['env'], input: unknown): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  if (!Array.isArray(input)) return errors;
  const hours = input.map((b): Partial<Record<keyof WeeklyHoursBlock, unknown>> => (b && typeof b === 'object' ? b : {}));
  if (hours.length > MAX_WEEKLY_BLOCKS) errors.push({ field: 'hours', message: `at most ${MAX_WEEKLY_BLOCKS} blocks` });
  hours.forEach((b, i) => {
    if (typeof b.start === 'string' && typeof b.end === 'string' && HHMM.test(b.start) && HHMM.test(b.end) && b.end <= b.start) {
      errors.push({ field: `hours[${i}].end`, message: 'must be after start' });
    }
  });
  const reasonsOf = (b: (typeof hours)[number]): unknown[] => (Array.isArray(b.visit_reason_ids) ? b.visit_reason_ids : []);
  const asked = [...new Set(hours.flatMap(reasonsOf).filter((id): id is string => typeof id === 'string'))];
  if (asked.length) {
    const known = new Set(
      (await db.selectFrom('visit_reasons').select('id').where('env', '=', env).where('id', '=', sql<string>`ANY(${asked}::text[])`).execute()).map((r) => r.id),
    );
    hours.forEach((b, i) =>
      reasonsOf(b).forEach((id, k) => {
        if (typeof id === 'string' && !known.has(id)) errors.push({ field: `hours[${i}].visit_reason_ids[${k}]`, message: `unknown visit reason ${id}` });
      }),
    );
  }
  return errors;
}

/**
 * Replaces the weekly hours of provider-location `providerLocationId` of the caller's practice
 * (`not_found` otherwise) with `hours` (empty: closed every week). `invalid` names every bad block
 * field. A schedule change (`scheduleChange`): `dryRun` answers the stranded appointments without
 * saving; stranded ones refuse it (`conflict`) unless `allowStranded`. A saved change writes its
 * audit row (`requestId` in it). Returns the blocks saved.
 */
export async function replaceWeeklyHours(
  db: Kysely<Database>,
  caller: PracticeCaller,
  providerLocationId: string,
  hours: WeeklyHoursBlock[],
  opts: { dryRun?: boolean; allowStranded?: boolean; now?: Date; requestId?: string } = {},
): Promise<ScheduleChangeOutcome<WeeklyHoursBlock[]>> {
  const pl = await practiceProviderLocation(db, caller, providerLocationId);
  const errors = await hoursErrors(db, caller.env, hours);
  if (errors.length) throw invalidFields(errors);
  const audit = { caller, entry: { action: 'schedule:weekly_hours_replaced' as const, providerId: pl.providerId, providerLocationId: pl.id, requestId: opts.requestId } };
  return scheduleChange(db, { env: caller.env, providerId: pl.providerId, pls: new Map([[pl.id, pl]]), ...opts, audit }, async (trx) => {
    await trx.deleteFrom('weekly_schedules').where('env', '=', caller.env).where('provider_location_id', '=', pl.id).execute();
    if (hours.length) {
      await trx
        .insertInto('weekly_schedules')
        .values(hours.map((b) => ({
          env: caller.env,
          provider_location_id: pl.id,
          weekday: b.weekday,
          start_local: b.start,
          end_local: b.end,
          visit_reason_ids: b.visit_reason_ids ?? null,
          patient_type: b.patient_type ?? null,
        })))
        .execute();
    }
    return hours;
  });
}
