/**
 * The checks of a booking request after its schema (docs/api/errors.md, "Validation"): the rules a
 * schema cannot say (patient rules, the start time's form) and the references (provider-location,
 * visit reason, insurance plan and payer kind, the schedule), every error at once. They read each
 * value only when it has the right type, so they also serve a body the schema refused.
 */
import type { Kysely } from 'kysely';
import type { DateTime } from 'luxon';
import type { Database } from '../../db/schema.js';
import { mergeFieldErrors, type FieldError } from '../errors.js';
import type { Principal } from '../credentials/principal.js';
import { offersStart } from '../availability/scheduled-start.js';
import { LocalClock, parseOffsetDateTime } from '../scheduling/local-time.js';
import { contextDay, loadBookingContext, type BookingContext } from './booking-context.js';
import { patientErrors, payerKind, type PatientInput, type PayerKind } from './patient-rules.js';

/** Every payer kind: what a provider-location without a stored restriction takes. */
const PAYER_KINDS: PayerKind[] = ['in_network', 'out_of_network', 'self_pay'];

/** What the reference checks read of a booking request: each value only when it has the right type. */
export interface BookingRefs {
  visitReasonId: string | undefined;
  patientType: 'new' | 'existing' | undefined;
  insurance: PatientInput['insurance'] | undefined;
  hasInsurance: boolean;
}

/** The references of a request body that may not have passed the schema. */
export function bookingRefs(data: Record<string, unknown>): BookingRefs {
  const patient = isObject(data.patient) ? data.patient : {};
  const ins = isObject(patient.insurance) ? patient.insurance : undefined;
  return {
    visitReasonId: typeof data.visit_reason_id === 'string' ? data.visit_reason_id : undefined,
    patientType: data.patient_type === 'new' || data.patient_type === 'existing' ? data.patient_type : undefined,
    insurance: ins && {
      ...(typeof ins.insurance_plan_id === 'string' ? { insurance_plan_id: ins.insurance_plan_id } : {}),
      ...(typeof ins.is_self_pay === 'boolean' ? { is_self_pay: ins.is_self_pay } : {}),
    },
    hasInsurance: ins !== undefined,
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The reference errors of a booking against its context, all of them (docs/api/errors.md,
 * "Validation"): provider-location, visit reason, required insurance, plan, payer kind, and
 * whether the schedule offers the start time (checked only once everything it needs is valid).
 */
export function referenceErrors(r: BookingRefs, ctx: BookingContext, start: DateTime | undefined, now: Date, clock: LocalClock): FieldError[] {
  const errors: FieldError[] = [];
  const add = (field: string, message: string) => errors.push({ field, message });
  const pl = ctx.pl?.active ? ctx.pl : undefined;
  if (!pl) add('data.provider_location_id', 'unknown provider location, or not in your directory');
  let reasonOk = false;
  if (!ctx.durations) add('data.visit_reason_id', `unknown visit reason ${r.visitReasonId ?? ''}`);
  else if (pl && !pl.visitReasonIds.includes(r.visitReasonId ?? '')) add('data.visit_reason_id', 'the provider does not accept this visit reason');
  else if (pl && !ctx.effective) add('data.visit_reason_id', 'the practice does not offer this visit reason at this provider location');
  else reasonOk = true;
  if (ctx.insurancePlanKnown === false) add('data.patient.insurance.insurance_plan_id', 'unknown insurance plan');
  if (!pl) return errors;
  if (pl.requiredFields.includes('patient.insurance') && !r.hasInsurance) add('data.patient.insurance', 'is required by this provider location');
  else if (ctx.insurancePlanKnown !== false) {
    const payer = payerKind(r.insurance, ctx.insurancePlanInNetwork);
    const accepted = pl.acceptsBookingRequestsFrom ?? PAYER_KINDS;
    if (!accepted.includes(payer)) {
      add('data.patient.insurance', `this provider location takes booking requests from ${accepted.join(', ') || 'nobody'} only; this one is ${payer}`);
    }
  }
  if (start && reasonOk && r.patientType && !offersStart(ctx.schedule, pl, { visitReasonId: r.visitReasonId!, patientType: r.patientType, startMs: start.toMillis(), now }, clock)) {
    add('data.start_time', 'is not a start time the availability endpoint offers for this provider location, visit reason and patient type');
  }
  return errors;
}

/** The errors a schema cannot find in a booking body: patient rules and the start time's form. */
export function formatErrors(data: Record<string, unknown>, now: Date): { errors: FieldError[]; start: DateTime | undefined } {
  const errors = patientErrors(data.patient, now);
  const start = typeof data.start_time === 'string' ? (parseOffsetDateTime(data.start_time) ?? undefined) : undefined;
  if (typeof data.start_time === 'string' && !start) errors.push({ field: 'data.start_time', message: 'must be an ISO-8601 date-time with a UTC offset' });
  return { errors, start };
}

/**
 * Every error of a booking body after its schema's (docs/api/errors.md, "Validation"), for a body
 * the schema refused: patient rules, the start time's form, and, when the provider-location and
 * visit reason are strings, the reference checks against a freshly read context. Writes nothing.
 */
export async function bookingProblems(db: Kysely<Database>, principal: Principal, body: unknown, now = new Date()): Promise<FieldError[]> {
  const data = isObject(body) && isObject(body.data) ? body.data : undefined;
  if (!data) return [];
  const { errors, start } = formatErrors(data, now);
  if (typeof data.provider_location_id !== 'string' || typeof data.visit_reason_id !== 'string') return errors;
  const refs = bookingRefs(data);
  const ctx = await loadBookingContext(db, principal, {
    providerLocationId: data.provider_location_id,
    visitReasonId: data.visit_reason_id,
    insurancePlanId: refs.insurance?.insurance_plan_id || undefined,
    day: contextDay(start ? start.toMillis() : now.getTime()),
  });
  return mergeFieldErrors(errors, referenceErrors(refs, ctx, start, now, new LocalClock()));
}

