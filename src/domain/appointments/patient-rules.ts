/**
 * The rules of docs/api/appointments.md#create-an-appointment that a JSON schema does not express (types, required fields, enums
 * and lengths are in the route schema): phone digits, ZIP, state code, real dates, gender
 * combinations, e-mail shape, and an insurance object that says either a plan or self-pay
 * (docs/scheduling.md, "Who a location takes bookings from"). Each failure names its field.
 */
import { DateTime } from 'luxon';
import type { FieldError } from '../errors.js';

export const GENDER_VALUES = [
  'female_at_birth', 'male_at_birth', 'cisgender', 'genderfluid', 'genderqueer', 'intersex', 'non_binary',
  'transgender_man', 'transgender_woman', 'prefer_not_to_say', 'none_apply',
] as const;
const ALONE = ['prefer_not_to_say', 'none_apply'];

/** US state and territory codes a patient address may use. */
export const STATE_CODES: readonly string[] = (
  'AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA ' +
  'RI SC SD TN TX UT VT VA WA WV WI WY PR VI GU AS MP'
).split(' ');
const STATES = new Set(STATE_CODES);

export interface PatientInput {
  developer_patient_id?: string;
  first_name: string;
  last_name: string;
  date_of_birth: string;
  sex_at_birth: 'male' | 'female';
  phone_number: string;
  email_address: string;
  patient_address: { address1: string; address2?: string; city: string; state: string; zip_code: string };
  insurance?: { insurance_plan_id?: string; insurance_group_number?: string; insurance_member_id?: string; is_self_pay?: boolean };
  gender?: string[];
}

/** Unformatted 10 digits; first and fourth digits not 0 or 1 (NANP). */
export function phoneError(phone: string): string | undefined {
  if (!/^\d{10}$/.test(phone)) return 'must be 10 digits, unformatted';
  if (phone[0] === '0' || phone[0] === '1') return 'first digit must not be 0 or 1';
  if (phone[3] === '0' || phone[3] === '1') return 'fourth digit must not be 0 or 1';
  return undefined;
}

/** A string value, or undefined for anything else (a check of input the schema refused skips it). */
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const obj = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/**
 * Field errors of a patient (prefix `data.patient`); empty when valid. Takes any value: a field of
 * the wrong type is skipped (the schema names it), so this also serves input the schema refused.
 */
export function patientErrors(patient: PatientInput | unknown, now: Date): FieldError[] {
  const errors: FieldError[] = [];
  const p = obj(patient);
  if (!p) return errors;
  const f = (field: string, message: string) => errors.push({ field: `data.patient.${field}`, message });
  const blank = (v: unknown) => str(v) !== undefined && !str(v)!.trim();
  if (blank(p.first_name)) f('first_name', 'must not be blank');
  if (blank(p.last_name)) f('last_name', 'must not be blank');
  const dobText = str(p.date_of_birth);
  if (dobText !== undefined) {
    const dob = /^\d{4}-\d{2}-\d{2}$/.test(dobText) ? DateTime.fromISO(dobText, { zone: 'UTC' }) : undefined;
    if (!dob?.isValid) f('date_of_birth', 'must be a real date YYYY-MM-DD');
    else if (dob.toMillis() > now.getTime()) f('date_of_birth', 'must not be in the future');
    else if (dob.year < 1880) f('date_of_birth', 'must be after 1880');
  }
  const phoneText = str(p.phone_number);
  const phone = phoneText !== undefined ? phoneError(phoneText) : undefined;
  if (phone) f('phone_number', phone);
  const email = str(p.email_address);
  if (email !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) f('email_address', 'must be an e-mail address');
  const a = obj(p.patient_address);
  if (a) {
    if (blank(a.address1)) f('patient_address.address1', 'must not be blank');
    if (blank(a.city)) f('patient_address.city', 'must not be blank');
    if (str(a.state) !== undefined && !STATES.has(str(a.state)!)) f('patient_address.state', 'must be a two-letter US state code');
    if (str(a.zip_code) !== undefined && !/^\d{5}$/.test(str(a.zip_code)!)) f('patient_address.zip_code', 'must be 5 digits');
  }
  const ins = obj(p.insurance);
  if (ins) {
    const plan = str(ins.insurance_plan_id)?.trim();
    if (plan && ins.is_self_pay === true) f('insurance', 'names an insurance plan and is_self_pay: true; send one or the other');
    else if (!plan && ins.is_self_pay !== true) f('insurance', 'must name insurance_plan_id, or set is_self_pay: true');
  }
  if (Array.isArray(p.gender)) {
    const gender = p.gender as unknown[];
    if (new Set(gender).size !== gender.length) f('gender', 'must not repeat a value');
    const alone = gender.find((g) => typeof g === 'string' && ALONE.includes(g));
    if (alone && gender.length > 1) f('gender', `${String(alone)} must be used alone`);
  }
  return errors;
}

/** Whose booking request this is, in the terms of `booking_requirements.accepts_booking_requests_from`. */
export type PayerKind = 'in_network' | 'out_of_network' | 'self_pay';

/**
 * The payer kind of a booking: no insurance object, or `is_self_pay: true`, is `self_pay`; a plan
 * the provider-location takes is `in_network`, any other plan `out_of_network`
 * (docs/scheduling.md, "Who a location takes bookings from").
 */
export function payerKind(insurance: PatientInput['insurance'], planInNetwork: boolean | undefined): PayerKind {
  if (!insurance || insurance.is_self_pay === true || !insurance.insurance_plan_id?.trim()) return 'self_pay';
  return planInNetwork ? 'in_network' : 'out_of_network';
}
