/** TypeBox schemas of the Practice API's appointment routes (docs/decisions/0014-practice-workspace.md). */
import { Type } from 'typebox';
import { APPOINTMENT_STATUSES } from '../../../domain/appointments/states.js';
import { PROVIDER_CANCELLATION_REASON_TYPES } from '../../../domain/practices/appointments/actions.js';

const Status = Type.Unsafe<(typeof APPOINTMENT_STATUSES)[number]>(Type.String({ enum: APPOINTMENT_STATUSES }));
const Name = Type.Object({ first_name: Type.String(), last_name: Type.String() });
const VisitReason = Type.Object({ id: Type.String(), name: Type.String() });

const appointmentFields = {
  appointment_id: Type.String(),
  appointment_status: Status,
  confirmation_type: Type.String(),
  start_time: Type.String({ description: 'ISO-8601 with the location\'s own UTC offset' }),
  end_time: Type.String(),
  start_time_utc: Type.String(),
  end_time_utc: Type.String(),
  arrived: Type.Boolean(),
  visit_reason: VisitReason,
  patient: Name,
  booked_by: Type.String({ description: 'The booking developer\'s app name' }),
};

export const CalendarQuery = Type.Object({
  provider_id: Type.String({ minLength: 1 }),
  provider_location_id: Type.Optional(Type.String({ minLength: 1 })),
  from: Type.String({ format: 'date', description: 'First local date (YYYY-MM-DD, the location\'s zone)', 'x-error-message': 'must be a date YYYY-MM-DD' }),
  to: Type.String({ format: 'date', description: 'Last local date, inclusive, at most 31 days after from', 'x-error-message': 'must be a date YYYY-MM-DD' }),
});

export const CalendarResponse = Type.Object({
  request_id: Type.String(),
  data: Type.Object({
    provider_id: Type.String(),
    from: Type.String(),
    to: Type.String(),
    provider_locations: Type.Array(
      Type.Object({
        provider_location_id: Type.String(),
        location_id: Type.String(),
        time_zone: Type.String(),
        active: Type.Boolean(),
        days: Type.Array(
          Type.Object({
            date: Type.String(),
            appointments: Type.Array(Type.Object(appointmentFields)),
            open_slots: Type.Array(
              Type.Object({
                start_time: Type.String(),
                start_time_utc: Type.String(),
                end_time_utc: Type.String(),
                visit_reason_id: Type.String(),
                patient_types: Type.Array(Type.String({ enum: ['new', 'existing'] })),
              }),
            ),
          }),
        ),
      }),
    ),
  }),
});

export const ListQuery = Type.Object({
  page: Type.Integer({ minimum: 0, maximum: 10, default: 0, description: 'Zero-based page index' }),
  page_size: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
  from: Type.Optional(Type.String({ description: 'Start time at or after this instant (ISO-8601 with offset)' })),
  to: Type.Optional(Type.String({ description: 'Start time before this instant' })),
  status: Type.Optional(Type.String({ description: 'Comma list of statuses' })),
  provider_id: Type.Optional(Type.String({ minLength: 1 })),
});

export const ListItem = Type.Object({ ...appointmentFields, provider_id: Type.String(), provider_location_id: Type.String(), time_zone: Type.String() });

export const AppointmentParams = Type.Object({ appointment_id: Type.String({ minLength: 1, maxLength: 100 }) });

export const DetailResponse = Type.Object({
  request_id: Type.String(),
  data: Type.Object({
    appointment_id: Type.String(),
    appointment_status: Status,
    confirmation_type: Type.String(),
    visit_type: Type.String(),
    provider_id: Type.String(),
    provider_location_id: Type.String(),
    location_id: Type.String(),
    time_zone: Type.String(),
    start_time: Type.String(),
    end_time: Type.String(),
    start_time_utc: Type.String(),
    end_time_utc: Type.String(),
    pending_start_time_utc: Type.Optional(Type.String()),
    patient_type: Type.String(),
    arrived: Type.Boolean(),
    notes: Type.Optional(Type.String()),
    cancellation_reason_type: Type.Optional(Type.String()),
    cancellation_reason: Type.Optional(Type.String()),
    created_time_utc: Type.String(),
    last_modified_time_utc: Type.String(),
    visit_reason: VisitReason,
    booked_by: Type.Object({ developer_id: Type.String(), name: Type.String() }),
    patient: Type.Object(
      {
        first_name: Type.String(),
        last_name: Type.String(),
        date_of_birth: Type.Optional(Type.String()),
        sex_at_birth: Type.Optional(Type.String()),
        phone_number: Type.Optional(Type.String()),
        email_address: Type.Optional(Type.String()),
        address: Type.Optional(Type.Unknown()),
        insurance: Type.Optional(Type.Unknown()),
      },
      { description: 'Contact details, date of birth, address and insurance for practice staff; the name alone for a provider user' },
    ),
    history: Type.Array(Type.Object({ at: Type.String(), action: Type.String(), actor_kind: Type.String() }), { description: 'The changes, oldest first; no patient data' }),
  }),
});

export const MoveResponse = Type.Object({
  request_id: Type.String(),
  data: Type.Object({ appointment_id: Type.String(), appointment_status: Status }),
});

export const CancelBody = Type.Object({
  cancellation_reason_type: Type.Unsafe<(typeof PROVIDER_CANCELLATION_REASON_TYPES)[number]>(
    Type.String({ enum: [...PROVIDER_CANCELLATION_REASON_TYPES], description: 'A provider reason (docs/api/appointments.md#cancel)' }),
  ),
  cancellation_reason: Type.Optional(Type.String({ maxLength: 50, description: 'Free text, only with other_provider_reason' })),
});

export const MoveBody = Type.Object({
  start_time: Type.String({ minLength: 1, description: 'A start the availability endpoint offers for this appointment, ISO-8601 with offset' }),
});
