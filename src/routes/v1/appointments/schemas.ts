/**
 * Request and response schemas of the appointment operations (docs/api/appointments.md, docs/api/README.md#operations). Types, required fields, enums and lengths live here; the rules a schema
 * cannot express (phone digits, ZIP, state codes, gender combinations, schedule) are checked in
 * `src/domain/appointments/` and also answer 400 naming the field.
 */
import { Type } from 'typebox';
import { APPOINTMENT_STATUSES } from '../../../domain/appointments/states.js';
import { CANCELLATION_REASON_TYPES } from '../../../domain/appointments/cancel.js';
import { GENDER_VALUES, STATE_CODES } from '../../../domain/appointments/patient-rules.js';

/** A string enum typed as the union of its values. */
const enumOf = <T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>(Type.String({ enum: [...values], ...(description ? { description } : {}) }));

const Str = Type.String();
const OptStr = Type.Optional(Type.String());

export const AppointmentStatus = enumOf(APPOINTMENT_STATUSES);
export const PatientType = enumOf(['new', 'existing'] as const, 'Whether the patient has been to the provider\'s practice');
const ConfirmationType = enumOf(['auto', 'manual', 'pending_evaluation'] as const);
const VisitType = enumOf(['in_person', 'platform_video_service', 'third_party_video_service'] as const);
export const CancellationReasonType = enumOf(CANCELLATION_REASON_TYPES);

/**
 * A rule with its own message (`x-error-message`): Ajv reports a failure of the schema that carries
 * it with that message, naming the field the schema describes (src/http/validation.ts).
 */
const rule = (message: string, field?: string) => ({ 'x-error-message': message, ...(field ? { 'x-error-field': field } : {}) });
const NotBlank = (maxLength: number) => Type.String({ maxLength, pattern: '\\S', ...rule('must not be blank') });

export const PatientAddress = Type.Object({
  address1: NotBlank(50),
  address2: Type.Optional(Type.String({ maxLength: 20 })),
  city: NotBlank(50),
  state: Type.String({ enum: [...STATE_CODES], description: 'Two-letter US state or territory code', ...rule('must be a two-letter US state code') }),
  zip_code: Type.String({ pattern: '^[0-9]{5}$', description: '5 digits', ...rule('must be 5 digits') }),
});

const ALONE_GENDERS = ['prefer_not_to_say', 'none_apply'];

export const PatientInsurance = Type.Object(
  {
    insurance_plan_id: Type.Optional(Type.String({ maxLength: 200 })),
    insurance_group_number: OptStr,
    insurance_member_id: OptStr,
    is_self_pay: Type.Optional(Type.Boolean()),
  },
  {
    description: 'Either an insurance plan (`insurance_plan_id`) or `is_self_pay: true`, not both',
    // Self-pay names no plan; otherwise a plan is named.
    if: { properties: { is_self_pay: { const: true } }, required: ['is_self_pay'] },
    then: { not: { properties: { insurance_plan_id: { pattern: '\\S' } }, required: ['insurance_plan_id'] }, ...rule('names an insurance plan and is_self_pay: true; send one or the other') },
    else: { properties: { insurance_plan_id: { type: 'string' } }, required: ['insurance_plan_id'], ...rule('must name insurance_plan_id, or set is_self_pay: true') },
  },
);

export const PatientInput = Type.Object({
  developer_patient_id: Type.Optional(Type.String({ maxLength: 255 })),
  first_name: NotBlank(50),
  last_name: NotBlank(50),
  date_of_birth: Type.String({ format: 'date', description: 'YYYY-MM-DD, after 1880 and not in the future', ...rule('must be a real date YYYY-MM-DD') }),
  sex_at_birth: enumOf(['male', 'female'] as const),
  phone_number: Type.String({
    maxLength: 10,
    pattern: '^[2-9][0-9]{2}[2-9][0-9]{6}$',
    description: 'Unformatted 10 digits; first and fourth digits not 0 or 1',
    ...rule('must be 10 unformatted digits, the first and fourth not 0 or 1'),
  }),
  email_address: Type.String({ maxLength: 255, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', ...rule('must be an e-mail address') }),
  patient_address: PatientAddress,
  insurance: Type.Optional(PatientInsurance),
  gender: Type.Optional(
    Type.Array(enumOf(GENDER_VALUES), {
      uniqueItems: true,
      description: '`prefer_not_to_say` and `none_apply` must be used alone',
      if: { contains: { enum: ALONE_GENDERS } },
      then: { maxItems: 1, ...rule('prefer_not_to_say and none_apply must be used alone') },
    }),
  ),
});

export const CreateBody = Type.Object({
  appointment_type: Type.Literal('providers'),
  data: Type.Object({
    start_time: Type.String({
      pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}.*([Zz]|[+-]\\d{2}:?\\d{2})$',
      description: 'ISO-8601 with a UTC offset; a start time the availability endpoint returns',
      ...rule('must be an ISO-8601 date-time with a UTC offset'),
    }),
    visit_reason_id: Str,
    provider_location_id: Str,
    patient: PatientInput,
    patient_type: PatientType,
    notes: Type.Optional(Type.String({ maxLength: 100 })),
  }),
});

/** the fields of create and reschedule answers, docs/api/appointments.md#appointment-records. */
const createFieldProps = {
  appointment_id: Str,
  appointment_status: AppointmentStatus,
  developer_patient_id: OptStr,
  is_provider_resource: Type.Boolean(),
  location_phone_number: OptStr,
  location_phone_extension: OptStr,
  waiting_room_path: OptStr,
  confirmation_type: ConfirmationType,
  visit_type: VisitType,
  notes: OptStr,
};
export const CreateFields = Type.Object(createFieldProps);

/** the fields of reads and lists, docs/api/appointments.md#appointment-records. */
export const AppointmentRecord = Type.Object({
  ...createFieldProps,
  visit_type: Type.Optional(VisitType),
  start_time: Str,
  created_time_utc: OptStr,
  last_modified_time_utc: OptStr,
  provider_location_id: Str,
  practice_id: OptStr,
  visit_reason_id: Str,
  patient_type: Type.Optional(PatientType),
  cancellation_reason: OptStr,
  cancellation_reason_type: OptStr,
});

export const StatusFields = Type.Object({ appointment_id: Str, appointment_status: AppointmentStatus, developer_patient_id: OptStr });

export const IdParams = Type.Object({ appointment_id: Type.String({ minLength: 1, maxLength: 100 }) });

export const ListQuery = Type.Object({
  page: Type.Integer({ minimum: 0, maximum: 10, default: 0, description: 'Zero-based page index' }),
  page_size: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  statuses: Type.Optional(Type.String({ description: 'Comma-delimited appointment statuses' })),
  developer_patient_id: OptStr,
  sort_by: Type.Optional(enumOf(['start_time_utc', 'created_time_utc', 'last_modified_time_utc'] as const)),
  sort_direction: Type.Optional(enumOf(['ascending', 'descending'] as const)),
  provider_ids: Type.Optional(Type.String({ description: 'Comma-separated provider ids' })),
  location_ids: Type.Optional(Type.String({ description: 'Comma-separated location ids' })),
  practice_ids: Type.Optional(Type.String({ description: 'Comma-separated practice ids' })),
  start_time_utc_min: OptStr,
  start_time_utc_max: OptStr,
  created_time_utc_min: OptStr,
  created_time_utc_max: OptStr,
  last_modified_time_utc_min: OptStr,
  last_modified_time_utc_max: OptStr,
});

export const ConfirmBody = Type.Object({ appointment_id: Type.String({ minLength: 1 }) });

const FREE_TEXT_REASON = 'is allowed only with cancellation_reason_type other_patient_reason or other_provider_reason';

export const CancelBody = Type.Object(
  {
    appointment_id: Type.String({ minLength: 1 }),
    cancellation_reason_type: Type.Optional(CancellationReasonType),
    cancellation_reason: Type.Optional(Type.String({ maxLength: 50, description: 'Only with other_patient_reason or other_provider_reason' })),
  },
  {
    // Free text only with a free-text reason type.
    if: { properties: { cancellation_reason: { type: 'string' } }, required: ['cancellation_reason'] },
    then: {
      required: ['cancellation_reason_type'],
      // (Every property listed, so validators that treat a subschema's properties as closed accept a valid body.)
      properties: {
        appointment_id: { type: 'string' },
        cancellation_reason: { type: 'string' },
        cancellation_reason_type: { enum: ['other_patient_reason', 'other_provider_reason'], ...rule(FREE_TEXT_REASON, 'cancellation_reason') },
      },
      ...rule(FREE_TEXT_REASON, 'cancellation_reason'),
    },
  },
);

export const RescheduleBody = Type.Object({
  appointment_id: Type.String({ minLength: 1 }),
  start_time: Type.String({ description: 'New start, ISO-8601 with offset, offered by the availability endpoint' }),
});

export const UpdateStatusBody = Type.Object({
  appointment_id: Type.String({ minLength: 1 }),
  appointment_status: enumOf(['arrived', 'no_show'] as const),
});

export const ParticipantsData = Type.Object({
  provider_id: Str,
  location_id: Str,
  patient: Type.Object({
    patient_id: Str,
    developer_patient_id: OptStr,
    first_name: Str,
    last_name: Str,
    date_of_birth: Str,
    sex_at_birth: enumOf(['male', 'female'] as const),
    phone_number: Str,
    email_address: Str,
    uploaded_attachments: Type.Array(Type.Object({ attachment_type: Str, attachment_url: Str })),
    is_booked_by_another_patient: Type.Boolean(),
  }),
});

export const envelope = <T extends import('typebox').TSchema>(data: T) => Type.Object({ request_id: Str, data });
