/**
 * A provider-location's schedule as its practice sees it (docs/scheduling.md): weekly hours, time
 * off from today on, the booking settings, accepted insurance plans and the visit reasons with their
 * durations per patient type. Read by staff, and by a provider user for their own provider.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { LocalClock } from '../../scheduling/local-time.js';
import { practiceProviderLocation, type PracticeCaller } from './scope.js';
import { listTimeOff, type TimeOff } from './time-off.js';
import { visitReasonsOf, type ProviderLocationVisitReason } from './visit-reasons.js';
import type { WeeklyHoursBlock } from './weekly-hours.js';

export interface ProviderLocationSchedule {
  provider_location_id: string;
  provider_id: string;
  location_id: string;
  time_zone: string;
  active: boolean;
  weekly_hours: WeeklyHoursBlock[];
  /** Time off of the provider (every location) or of this provider-location, ending today or later (local dates). */
  time_off: TimeOff[];
  confirmation_type: 'auto' | 'manual';
  required_fields: string[];
  accepts_booking_requests_from: string[];
  /** True: the practice's plan list applies and `insurance_plan_ids` is empty. */
  insurance_managed_at_practice: boolean;
  insurance_plan_ids: string[];
  /** The visit reasons of the provider-location (docs/decisions/0019-practice-visit-reasons.md). */
  visit_reasons: ProviderLocationVisitReason[];
}

/** The schedule of provider-location `providerLocationId` of the caller's practice (`not_found` otherwise). */
export async function getSchedule(db: Kysely<Database>, caller: PracticeCaller, providerLocationId: string, opts: { now?: Date } = {}): Promise<ProviderLocationSchedule> {
  const pl = await practiceProviderLocation(db, caller, providerLocationId);
  const today = new LocalClock().today(pl.timeZone, opts.now ?? new Date());
  const [blocks, row, plans, reasons, timeOff] = await Promise.all([
    db.selectFrom('weekly_schedules')
      .select(['weekday', sql<string>`to_char(start_local, 'HH24:MI')`.as('start'), sql<string>`to_char(end_local, 'HH24:MI')`.as('end'), 'visit_reason_ids', 'patient_type'])
      .where('env', '=', caller.env).where('provider_location_id', '=', pl.id).orderBy('weekday').orderBy('start_local').execute(),
    db.selectFrom('provider_locations as pl')
      .innerJoin('practices as pt', (j) => j.on('pt.env', '=', caller.env).on('pt.id', '=', pl.practiceId))
      .select(['pl.required_fields', 'pl.accepts_booking_requests_from', 'pt.insurance_managed_at_practice'])
      .where('pl.env', '=', caller.env).where('pl.id', '=', pl.id).executeTakeFirst(),
    db.selectFrom('provider_location_insurance_plans').select('insurance_plan_id')
      .where('env', '=', caller.env).where('provider_location_id', '=', pl.id).orderBy('insurance_plan_id').execute(),
    visitReasonsOf(db, caller.env, pl),
    listTimeOff(db, caller, { providerId: pl.providerId, from: today }),
  ]);
  const managed = row?.insurance_managed_at_practice ?? false;
  return {
    provider_location_id: pl.id,
    provider_id: pl.providerId,
    location_id: pl.locationId,
    time_zone: pl.timeZone,
    active: pl.active,
    weekly_hours: blocks.map((b) => ({
      weekday: b.weekday, start: b.start, end: b.end,
      ...(b.visit_reason_ids ? { visit_reason_ids: b.visit_reason_ids } : {}),
      ...(b.patient_type ? { patient_type: b.patient_type } : {}),
    })),
    time_off: timeOff.filter((t) => t.provider_location_id === null || t.provider_location_id === pl.id),
    confirmation_type: pl.confirmationType === 'manual' ? 'manual' : 'auto',
    required_fields: row?.required_fields ?? [],
    accepts_booking_requests_from: row?.accepts_booking_requests_from ?? [],
    insurance_managed_at_practice: managed,
    insurance_plan_ids: managed ? [] : plans.map((p) => p.insurance_plan_id),
    visit_reasons: reasons,
  };
}
