/**
 * The Practice API's operations (`/practice/v1`, docs/decisions/0014-practice-workspace.md) for the
 * OpenAPI document: a stable `operationId` and a description of each, merged into `OPERATIONS`
 * (src/http/openapi-operations.ts). Schedules: docs/scheduling.md, "Practice schedules".
 */

/** The Practice API's operation ids and descriptions, keyed by `METHOD path`. */
export const PRACTICE_OPERATIONS: Record<string, { operationId: string; description: string }> = {
  'GET /practice/v1/me': {
    operationId: 'getPracticeMe',
    description: 'The signed-in staff member (or provider user): their role and scopes (the token\'s, capped by the role), their practice, and the practice\'s providers with their provider-locations, time zones and confirmation types (a provider user: their own provider only). Needs `practice.read`.',
  },
  'GET /practice/v1/staff': {
    operationId: 'listPracticeStaff',
    description: 'Every staff login of the caller\'s practice with its role, oldest first. Needs `practice.admin` (practice admins only).',
  },
  'POST /practice/v1/staff': {
    operationId: 'invitePracticeStaff',
    description: 'Invites a staff member or another admin of the caller\'s practice: a one-time link, answered once (stored only as a hash), that lets its holder set a password within 7 days and then sign in to the workspace. 400 when the address already has an account. Needs `practice.admin`.',
  },
  'DELETE /practice/v1/staff/{user_id}': {
    operationId: 'removePracticeStaff',
    description: 'Removes a member of the caller\'s practice: their sign-in sessions end and their tokens stop working at once. 404 for anyone who is not a member of this practice (another practice\'s staff included); 409 for the practice\'s last admin. Needs `practice.admin`.',
  },
  'GET /practice/v1/provider_locations/{provider_location_id}/schedule': {
    operationId: 'getPracticeSchedule',
    description: 'One provider-location of the caller\'s practice as its schedule stands: weekly hours, time off from today on (the provider\'s and this location\'s), confirmation type, required booking fields, whose booking requests it takes, its insurance plans and the visit reasons with their lengths for new and existing patients. A provider user reads only their own provider\'s; any other provider-location is 404. Needs `practice.read`.',
  },
  'PUT /practice/v1/provider_locations/{provider_location_id}/weekly_hours': {
    operationId: 'replacePracticeWeeklyHours',
    description: 'Replaces all weekly blocks of a provider-location of the caller\'s practice (an empty list closes it every week); each block is checked by the rules of a directory import, every bad field named in one 400. A change that would leave live appointments outside open time is refused with 409 listing each (`stranded[i]`) unless `allow_stranded` is true; `dry_run: true` answers that list and saves nothing. A later directory import of the provider-location replaces these hours again. Needs `practice.write`.',
  },
  'GET /practice/v1/provider_locations/{provider_location_id}/visit_reasons': {
    operationId: 'listPracticeVisitReasons',
    description: 'The visit reasons the provider accepts (set by the directory) at a provider-location of the caller\'s practice: whether the practice offers each there, the effective duration per patient type (the practice\'s where it set one, else the directory\'s: what `/v1` availability and booking use) and the directory\'s. Needs `practice.read`.',
  },
  'PUT /practice/v1/provider_locations/{provider_location_id}/visit_reasons': {
    operationId: 'setPracticeVisitReasons',
    description: 'Replaces the practice\'s overrides of the visit reasons at a provider-location of the caller\'s practice: per reason the provider accepts, whether it is offered there and its duration for new and existing patients (left out: the directory\'s). A reason left out goes back to the directory\'s values; a directory re-import keeps the overrides except of reasons the provider no longer accepts. `/v1` availability and booking use the new durations at once; booked appointments keep their times. A longer duration that would run a live appointment past open time or into the provider\'s next booking, or a reason no longer offered, refuses the change with 409 listing each (`stranded[i]`) unless `allow_stranded` is true; `dry_run: true` answers that list (with each one\'s `reason`) and saves nothing. Reasons the provider does not accept, or listed twice, are named in one 400. Saved changes are audited with the staff member as actor. Needs `practice.write`.',
  },
  'PATCH /practice/v1/provider_locations/{provider_location_id}/settings': {
    operationId: 'updatePracticeSettings',
    description: 'Changes the booking settings of a provider-location of the caller\'s practice: confirmation type, required booking fields, accepted kinds of booking request and insurance plans; fields left out stay as they are. Unknown plans are named one by one (400); a practice that keeps its plan list at practice level answers 409 for plans. The next booking sees the change. Answers the schedule. Needs `practice.write`.',
  },
  'GET /practice/v1/time_off': {
    operationId: 'listPracticeTimeOff',
    description: 'The caller\'s practice\'s time off overlapping the local dates `from`…`to` (either may be left out), of one provider when `provider_id` is given (404 for a provider not of this practice), ordered by start date, at most 1,000 entries. A provider user sees only their own. Needs `practice.read`.',
  },
  'POST /practice/v1/time_off': {
    operationId: 'addPracticeTimeOff',
    description: 'Closes a provider of the caller\'s practice at every location, or at one provider-location, for a range of local dates: whole days, or from a local time on the first date to a local time on the last. `/v1` availability stops offering the time at once. Live appointments inside it refuse the change with 409 listing each unless `allow_stranded` is true; `dry_run: true` answers the list and saves nothing. Needs `practice.write`.',
  },
  'DELETE /practice/v1/time_off/{time_off_id}': {
    operationId: 'removePracticeTimeOff',
    description: 'Removes time off of the caller\'s practice; its time is offered again by `/v1` availability at once. 404 for time off of another practice (or another provider, for a provider user). Needs `practice.write`.',
  },
  'GET /practice/v1/calendar': {
    operationId: 'getPracticeCalendar',
    description: 'One provider of your practice, day by day in each location\'s own zone (at most 31 days): the appointments of every status, with the patient\'s name, the visit reason and the app that booked them, and the open slots, which are exactly the start times the availability endpoint offers, each listing the patient types it is open to. Limited to one provider-location when `provider_location_id` is given. A provider user reads only their own calendar; any other provider is 404. Needs `practice.read`.',
  },
  'GET /practice/v1/appointments': {
    operationId: 'listPracticeAppointments',
    description: 'The appointments of your practice\'s providers by start time, optionally within a window of start times, with given statuses or of one provider; paginated, at most 1,000 reachable. A provider user sees their own appointments only. Needs `practice.read`.',
  },
  'GET /practice/v1/appointments/{appointment_id}': {
    operationId: 'getPracticeAppointment',
    description: 'One appointment of your practice: status, times, visit reason, the developer that booked it, the patient and the history of its changes. Practice staff see the patient\'s contact details, date of birth, address and insurance; a provider user sees the name alone. Each read is written to the audit log. Another practice\'s appointment is 404. Needs `practice.read`.',
  },
  'POST /practice/v1/appointments/{appointment_id}/confirm': {
    operationId: 'confirmPracticeAppointment',
    description: 'Accepts a booking waiting for the provider (a `manual` location\'s `pending_booking`): it becomes `confirmed` and the booking developer receives the signed webhook. 409 naming the current status for any other appointment. Needs `practice.write`.',
  },
  'POST /practice/v1/appointments/{appointment_id}/decline': {
    operationId: 'declinePracticeAppointment',
    description: 'Turns down a `pending_booking`: it becomes `booking_failed`, its time is free again and the booking developer receives the signed webhook. 409 naming the current status otherwise. Needs `practice.write`.',
  },
  'POST /practice/v1/appointments/{appointment_id}/cancel': {
    operationId: 'cancelPracticeAppointment',
    description: 'Cancels on the provider\'s behalf with one of the provider reason types (free text only with `other_provider_reason`); the time is free again and the booking developer receives the signed webhook. 409 for an appointment already cancelled or a no-show. Needs `practice.write`.',
  },
  'POST /practice/v1/appointments/{appointment_id}/move': {
    operationId: 'movePracticeAppointment',
    description: 'Moves an appointment to another start time the schedule offers for it (400 naming `start_time` otherwise, 409 when someone holds it). Because the practice chooses the time the move is settled at once: the appointment is `rescheduled`, the old time freed, and the booking developer receives one webhook naming the status and the start time. Allowed from `confirmed`, `pending_reschedule` and `rescheduled`. Needs `practice.write`.',
  },
  'POST /practice/v1/appointments/{appointment_id}/arrived': {
    operationId: 'markPracticeAppointmentArrived',
    description: 'Records that the patient has come in, whatever the status (which stays as it is); the booking developer receives the signed webhook. Needs `practice.write`.',
  },
  'POST /practice/v1/appointments/{appointment_id}/no_show': {
    operationId: 'markPracticeAppointmentNoShow',
    description: 'Records that the patient did not come, from the start time until two days after it (409 outside that window or for a status that cannot become `no_show`); the booking developer receives the signed webhook. Needs `practice.write`.',
  },
  'GET /practice/v1/events': {
    operationId: 'streamPracticeEvents',
    description: 'A `text/event-stream` of the changes to your practice\'s appointments, the same events the booking developers receive by webhook, without patient data. Each message has an `id` (send the last one back as `Last-Event-ID` to resume after it; a malformed one is 400), the update type as `event`, and JSON `data` with the appointment id, update type, changed attributes and time. Changes made through this service arrive at once, others within about a second and a half; a comment every 15 s keeps the connection open. Needs `practice.read`.',
  },
};
