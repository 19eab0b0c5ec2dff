/**
 * The visit reasons a practice offers at one of its provider-locations, with a duration per patient
 * type (docs/decisions/0019-practice-visit-reasons.md; docs/scheduling.md). The directory says which
 * reasons the provider accepts and their durations; the practice may stop offering a reason at one
 * provider-location, or give it other durations there. The effective values are read everywhere
 * through src/domain/scheduling/visit-reason-durations.ts.
 */
import { sql, type Kysely } from 'kysely';
import type { Database, Env } from '../../../db/schema.js';
import { invalidFields, type FieldError } from '../../errors.js';
import { PATIENT_TYPES, type PatientType } from '../../patient-type.js';
import type { ProviderLocationContext } from '../../scheduling/schedule-data.js';
import { loadDurations, withOverride, type Durations } from '../../scheduling/visit-reason-durations.js';
import { practiceProviderLocation, type PracticeCaller } from './scope.js';
import { scheduleChange, type ScheduleChangeOutcome } from './stranded.js';

/** One visit reason of a provider-location as its practice sees it. */
export interface ProviderLocationVisitReason {
  visit_reason_id: string;
  name: string;
  /** False: the practice does not offer it at this provider-location (no slot, no booking). */
  offered: boolean;
  /** The effective durations (the practice's where it set one, else the directory's). */
  duration_minutes: Durations;
  /** The directory's durations. */
  directory_duration_minutes: Durations;
  /** True when the practice overrides something of this reason here. */
  overridden: boolean;
}

/** One item of a change: a reason the provider accepts, whether offered, and durations (left out: the directory's). */
export interface VisitReasonSetting {
  visit_reason_id: string;
  offered?: boolean | undefined;
  duration_minutes?: Partial<Record<PatientType, number>> | undefined;
}

/** The visit reasons of provider-location `pl` (those its provider accepts), by id. */
export async function visitReasonsOf(db: Kysely<Database>, env: Env, pl: ProviderLocationContext): Promise<ProviderLocationVisitReason[]> {
  if (pl.visitReasonIds.length === 0) return [];
  const [names, data] = await Promise.all([
    db.selectFrom('visit_reasons').select(['id', 'name']).where('env', '=', env)
      .where('id', '=', sql<string>`ANY(${pl.visitReasonIds}::text[])`).orderBy('id').execute(),
    loadDurations(db, env, [pl.id], pl.visitReasonIds),
  ]);
  const overrides = data.overrides.get(pl.id);
  return names.flatMap((r) => {
    const base = data.durations.get(r.id);
    if (!base) return [];
    const o = overrides?.get(r.id);
    // Offered or not, the durations shown are those it has (or would have) here.
    return [{ visit_reason_id: r.id, name: r.name, offered: o?.offered ?? true, duration_minutes: withOverride(base, o), directory_duration_minutes: base, overridden: o !== undefined }];
  });
}

/** The visit reasons of provider-location `providerLocationId` of the caller's practice (`not_found` otherwise). */
export async function listVisitReasons(db: Kysely<Database>, caller: PracticeCaller, providerLocationId: string): Promise<ProviderLocationVisitReason[]> {
  const pl = await practiceProviderLocation(db, caller, providerLocationId);
  return visitReasonsOf(db, caller.env, pl);
}

/**
 * The errors of a change past its schema (docs/api/errors.md, "Validation"): each reason must be one
 * the provider accepts, listed once. Safe on raw input: what is not the right shape is the schema's.
 */
export function visitReasonErrors(pl: Pick<ProviderLocationContext, 'visitReasonIds'>, input: unknown): FieldError[] {
  const errors: FieldError[] = [];
  if (!Array.isArray(input)) return errors;
  const seen = new Set<string>();
  input.forEach((item: unknown, i) => {
    const id = item && typeof item === 'object' ? (item as { visit_reason_id?: unknown }).visit_reason_id : undefined;
    if (typeof id !== 'string') return;
    const field = `visit_reasons[${i}].visit_reason_id`;
    if (!pl.visitReasonIds.includes(id)) errors.push({ field, message: `the provider does not accept visit reason ${id}` });
    else if (seen.has(id)) errors.push({ field, message: `visit reason ${id} is listed twice` });
    seen.add(id);
  });
  return errors;
}

/** `visitReasonErrors` for a provider-location of the caller's practice; none when it is not one (the route answers `404`). */
export async function visitReasonRequestErrors(db: Kysely<Database>, caller: PracticeCaller, providerLocationId: unknown, input: unknown): Promise<FieldError[]> {
  if (typeof providerLocationId !== 'string') return [];
  const pl = await practiceProviderLocation(db, caller, providerLocationId).catch(() => undefined);
  return pl ? visitReasonErrors(pl, input) : [];
}

/**
 * Sets the practice's visit reasons of provider-location `providerLocationId` of the caller's
 * practice (`not_found` otherwise): `settings` replaces every override there (a reason left out goes
 * back to the directory's values; an item offered with no duration of its own is no override; a
 * duration left out is the directory's). A
 * schedule change (`scheduleChange`): a longer duration that would put a live booking outside open
 * time or into the provider's next booking, or a reason no longer offered, strands it; `dryRun`
 * answers them without saving, and they refuse it (`conflict`) unless `allowStranded`. Bookings keep
 * their booked times; the new values apply to the next slot, booking and check at once. Returns the
 * visit reasons as saved.
 */
export async function setVisitReasons(
  db: Kysely<Database>,
  caller: PracticeCaller,
  providerLocationId: string,
  settings: VisitReasonSetting[],
  opts: { dryRun?: boolean; allowStranded?: boolean; now?: Date; requestId?: string } = {},
): Promise<ScheduleChangeOutcome<ProviderLocationVisitReason[]>> {
  const pl = await practiceProviderLocation(db, caller, providerLocationId);
  const errors = visitReasonErrors(pl, settings);
  if (errors.length) throw invalidFields(errors);
  const rows = settings
    .map((s) => ({
      env: caller.env,
      provider_location_id: pl.id,
      visit_reason_id: s.visit_reason_id,
      offered: s.offered ?? true,
      duration_new_minutes: s.duration_minutes?.new ?? null,
      duration_existing_minutes: s.duration_minutes?.existing ?? null,
      updated_by_user_id: caller.userId,
    }))
    .filter((r) => !r.offered || PATIENT_TYPES.some((pt) => r[`duration_${pt}_minutes`] !== null));
  const audit = { caller, entry: { action: 'schedule:visit_reasons_set' as const, providerId: pl.providerId, providerLocationId: pl.id, requestId: opts.requestId } };
  return scheduleChange(db, { env: caller.env, providerId: pl.providerId, pls: new Map([[pl.id, pl]]), ...opts, audit }, async (trx) => {
    await trx.deleteFrom('provider_location_visit_reasons').where('env', '=', caller.env).where('provider_location_id', '=', pl.id).execute();
    if (rows.length) await trx.insertInto('provider_location_visit_reasons').values(rows).execute();
    return visitReasonsOf(trx, caller.env, pl);
  });
}
