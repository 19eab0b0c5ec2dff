/**
 * The checks of directory search parameters a schema cannot make (docs/api/errors.md,
 * "Validation"): NPI lists, known ZIP codes, a specialty or visit reason that exists and agree with
 * each other, a known insurance plan. Each function reports every error at once and takes any value
 * for each parameter (a parameter of the wrong type is skipped: the schema names it), so the same
 * code serves a query the schema refused.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import type { FieldError } from '../errors.js';
import { zipCentroid, type ZipCentroid } from './geo.js';
import { existingPlanIds } from './insurance-plans.js';
import { getSpecialty, getVisitReason } from './reference-data.js';

/** At most this many NPIs per search. */
export const MAX_NPIS = 50;

type Query = Record<string, unknown>;
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The NPIs of a comma list, and its errors: at most `MAX_NPIS`, each ten digits; required or not. */
export function npiList(raw: unknown, required: boolean): { npis: string[] | undefined; errors: FieldError[] } {
  const npis = typeof raw === 'string' ? raw.split(',').map((s) => s.trim()).filter(Boolean) : [];
  if (npis.length === 0) {
    return { npis: undefined, errors: required && (raw === undefined || typeof raw === 'string') ? [{ field: 'npis', message: 'is required: a comma-delimited list of NPIs' }] : [] };
  }
  const errors: FieldError[] = [];
  if (npis.length > MAX_NPIS) errors.push({ field: 'npis', message: `must list at most ${MAX_NPIS} NPIs, got ${npis.length}` });
  const bad = npis.filter((n) => !/^\d{10}$/.test(n));
  if (bad.length) errors.push({ field: 'npis', message: `must be 10-digit NPIs: ${bad.slice(0, 5).join(', ')}` });
  return { npis, errors };
}

/** The error of `insurance_plan_id` when it names a plan the environment does not have. */
export async function planErrors(db: Db, env: Env, planId: unknown): Promise<FieldError[]> {
  const id = text(planId);
  if (id === undefined) return [];
  return (await existingPlanIds(db, env, [id])).has(id) ? [] : [{ field: 'insurance_plan_id', message: `unknown insurance plan ${id}` }];
}

/** A five-digit ZIP's centroid, or the error naming `zip_code` (only for five-digit input; the schema names the rest). */
function zipOrigin(zip: unknown): { origin: ZipCentroid | undefined; errors: FieldError[] } {
  if (typeof zip !== 'string' || !/^\d{5}$/.test(zip)) return { origin: undefined, errors: [] };
  const origin = zipCentroid(zip);
  return { origin, errors: origin ? [] : [{ field: 'zip_code', message: `unknown ZIP code ${zip}` }] };
}

/** What a provider-location search resolves its parameters to. */
export interface ProviderSearchParameters {
  origin: ZipCentroid | undefined;
  /** The specialty searched: named, or the visit reason's. */
  specialtyId: string | undefined;
  /** The visit reason searched: named, or the specialty's default. */
  visitReasonId: string | undefined;
  errors: FieldError[];
}

/**
 * Checks `GET /v1/provider_locations` parameters: a known ZIP, a specialty or a visit reason (both
 * known, and agreeing), a known plan. Every error at once.
 */
export async function providerSearchParameters(db: Db, env: Env, q: Query): Promise<ProviderSearchParameters> {
  const { origin, errors } = zipOrigin(q.zip_code);
  const specialty = text(q.specialty_id);
  const reason = text(q.visit_reason_id);
  let specialtyId = specialty;
  let visitReasonId = reason;
  if (!specialty && !reason) {
    errors.push({ field: 'specialty_id', message: 'specialty_id or visit_reason_id is required' });
  }
  const [vr, sp] = await Promise.all([reason ? getVisitReason(db, env, reason) : undefined, specialty ? getSpecialty(db, env, specialty) : undefined]);
  if (reason) {
    if (!vr) errors.push({ field: 'visit_reason_id', message: `unknown visit reason ${reason}` });
    else if (specialty && vr.specialty_id !== specialty) {
      errors.push({ field: 'visit_reason_id', message: `visit reason ${vr.id} belongs to specialty ${vr.specialty_id}, not ${specialty}` });
    } else specialtyId = vr.specialty_id;
  }
  if (specialty) {
    if (!sp) errors.push({ field: 'specialty_id', message: `unknown specialty ${specialty}` });
    else visitReasonId ??= sp.default_visit_reason_id;
  }
  errors.push(...(await planErrors(db, env, q.insurance_plan_id)));
  return { origin, specialtyId, visitReasonId, errors };
}

/** Checks `GET /v1/providers` parameters: the NPI list and a known plan. */
export async function npiSearchErrors(db: Db, env: Env, q: Query): Promise<FieldError[]> {
  return [...npiList(q.npis, true).errors, ...(await planErrors(db, env, q.insurance_plan_id))];
}

/** Checks `GET /v1/facilities` parameters: NPIs or a ZIP (known), a known visit reason and plan. */
export async function facilitySearchParameters(db: Db, env: Env, q: Query): Promise<{ npis: string[] | undefined; origin: ZipCentroid | undefined; errors: FieldError[] }> {
  const { npis, errors } = npiList(q.npis, false);
  const zip = zipOrigin(q.zip_code);
  errors.push(...zip.errors);
  if (!npis && !text(q.zip_code)) errors.push({ field: 'zip_code', message: 'npis or zip_code is required' });
  const reason = text(q.visit_reason_id);
  if (reason && !(await getVisitReason(db, env, reason))) errors.push({ field: 'visit_reason_id', message: `unknown visit reason ${reason}` });
  errors.push(...(await planErrors(db, env, q.insurance_plan_id)));
  return { npis, origin: zip.origin, errors };
}
