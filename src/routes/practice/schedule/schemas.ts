/**
 * TypeBox schemas of the Practice API's schedule routes (docs/scheduling.md). The weekly block and
 * the settings' values are the directory document's own schemas (docs/directory-format.md), so a
 * practice's change passes the same shape checks as an import.
 */
import { Type } from 'typebox';
import { ProviderLocationRecord, WeeklyScheduleBlockRecord } from '../../../domain/directory/document-schema.js';
import { MAX_WEEKLY_BLOCKS } from '../../../domain/practices/schedule/weekly-hours.js';

const LocalDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Local date YYYY-MM-DD in the location zone', 'x-error-message': 'must be a date YYYY-MM-DD' });
const LocalTime = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'Local wall-clock time HH:MM', 'x-error-message': 'must be a local time HH:MM' });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const PlParams = Type.Object({ provider_location_id: Type.String({ minLength: 1, maxLength: 401, description: 'Provider-location id `pr_…|lo_…` (percent-encode the `|`)' }) });
export const TimeOffParams = Type.Object({ time_off_id: Type.String({ minLength: 1, maxLength: 200 }) });

const ChangeFlags = {
  dry_run: Type.Optional(Type.Boolean({ description: 'true: save nothing, answer the appointments the change would strand' })),
  allow_stranded: Type.Optional(Type.Boolean({ description: 'true: save even when live appointments would be left outside open time' })),
};

export const TimeOffOut = Type.Object({
  time_off_id: Type.String(),
  provider_id: Type.String(),
  provider_location_id: Nullable(Type.String({ description: 'null: every location of the provider' })),
  start_date: Type.String(),
  end_date: Type.String(),
  start_local: Nullable(Type.String({ description: 'null: from midnight of start_date' })),
  end_local: Nullable(Type.String({ description: 'null: to the end of end_date' })),
  note: Nullable(Type.String()),
  created_by_user_id: Nullable(Type.String()),
  created_at: Type.String(),
});

export const TimeOffIn = Type.Object({
  provider_id: Type.String({ minLength: 1, maxLength: 200 }),
  provider_location_id: Type.Optional(Type.String({ minLength: 1, maxLength: 401, description: 'Omitted: every location of the provider' })),
  start_date: LocalDate,
  end_date: LocalDate,
  start_local: Type.Optional(LocalTime),
  end_local: Type.Optional(LocalTime),
  note: Type.Optional(Type.String({ maxLength: 500 })),
  ...ChangeFlags,
});

export const TimeOffQuery = Type.Object({
  provider_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  from: Type.Optional(LocalDate),
  to: Type.Optional(LocalDate),
});

export const Stranded = Type.Object({
  appointment_id: Type.String(),
  provider_location_id: Type.String(),
  start_time: Type.String({ description: 'With the location offset' }),
  status: Type.String(),
  reason: Type.String({
    enum: ['outside_open_time', 'overlaps_next_booking', 'visit_reason_not_offered'],
    description: 'Why: outside open time (at its visit reason\'s new length when that is longer than booked), that length would run into the provider\'s next booking, or its visit reason is no longer offered there',
  }),
});

/** The answer of a schedule change: saved or not (dry run), what it strands, and what it saved. */
export const changeOut = <T extends ReturnType<typeof Type.Object> | ReturnType<typeof Type.Array>>(data: T) =>
  Type.Object({ request_id: Type.String(), saved: Type.Boolean(), stranded: Type.Array(Stranded), data });

export const WeeklyHoursIn = Type.Object({
  hours: Type.Array(WeeklyScheduleBlockRecord, { maxItems: MAX_WEEKLY_BLOCKS, description: 'Replaces every weekly block; empty: closed every week' }),
  ...ChangeFlags,
});

const pl = ProviderLocationRecord.properties;
export const SettingsIn = Type.Object(
  {
    confirmation_type: pl.confirmation_type,
    required_fields: pl.required_fields,
    accepts_booking_requests_from: pl.accepts_booking_requests_from,
    insurance_plan_ids: pl.insurance_plan_ids,
  },
  { additionalProperties: false },
);

const Minutes = (description: string) => Type.Integer({ minimum: 5, maximum: 480, description });
const DurationsOut = (what: string) => Type.Object({ new: Minutes(`${what} for a new patient`), existing: Minutes(`${what} for an existing patient`) });

export const VisitReasonOut = Type.Object({
  visit_reason_id: Type.String(),
  name: Type.String(),
  offered: Type.Boolean({ description: 'false: the practice does not offer it at this provider-location (no slot, no booking)' }),
  duration_minutes: DurationsOut('Effective slot length (the practice\'s where it set one, else the directory\'s)'),
  directory_duration_minutes: DurationsOut('The directory\'s slot length'),
  overridden: Type.Boolean({ description: 'true: the practice sets something of this reason here' }),
});

const OverrideMinutes = (who: string) => Type.Optional(Minutes(`Slot length (5-480 minutes) for ${who} at this provider-location; left out: the directory's`));

export const VisitReasonsIn = Type.Object({
  visit_reasons: Type.Array(
    Type.Object({
      visit_reason_id: Type.String({ minLength: 1, maxLength: 200, description: 'A visit reason the provider accepts (its directory record)' }),
      offered: Type.Optional(Type.Boolean({ description: 'false: not offered at this provider-location. Default true' })),
      duration_minutes: Type.Optional(Type.Object({ new: OverrideMinutes('a new patient'), existing: OverrideMinutes('an existing patient') }, { additionalProperties: false })),
    }, { additionalProperties: false }),
    { maxItems: 500, description: 'Replaces every override of this provider-location; a reason left out goes back to the directory\'s values' },
  ),
  ...ChangeFlags,
}, { additionalProperties: false });

export const ScheduleOut = Type.Object({
  provider_location_id: Type.String(),
  provider_id: Type.String(),
  location_id: Type.String(),
  time_zone: Type.String(),
  active: Type.Boolean(),
  weekly_hours: Type.Array(WeeklyScheduleBlockRecord),
  time_off: Type.Array(TimeOffOut),
  confirmation_type: Type.String({ enum: ['auto', 'manual'] }),
  required_fields: Type.Array(Type.String()),
  accepts_booking_requests_from: Type.Array(Type.String()),
  insurance_managed_at_practice: Type.Boolean(),
  insurance_plan_ids: Type.Array(Type.String()),
  visit_reasons: Type.Array(VisitReasonOut),
});
