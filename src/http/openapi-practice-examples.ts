/**
 * Hand-written `/docs` examples of the Practice API's schedule operations (docs/scheduling.md,
 * "Practice schedules"), merged into `EXAMPLES` (src/http/openapi-examples.ts). Local times `HH:MM`
 * cannot be generated from their schemas, so these operations carry their own. Directory ids are
 * the fresh sandbox's (test/docs/openapi-examples-run.test.ts checks they exist).
 */
import type { Json, OperationExamples } from './openapi-example-types.js';

/** The schedule operations' examples over the given directory ids. */
export function practiceExamples(ids: { providerId: string; locationId: string; visitReasonId: string; appointmentId: string }): Record<string, OperationExamples> {
  const plId = `${ids.providerId}|${ids.locationId}`;
  const hours: Json[] = [
    { weekday: 1, start: '08:00', end: '12:00' },
    { weekday: 1, start: '13:00', end: '17:00', patient_type: 'existing' },
    { weekday: 3, start: '09:00', end: '16:30', visit_reason_ids: [ids.visitReasonId] },
  ];
  const timeOffId = 'to_5b2e0c9a41d7';
  const timeOff: Json = {
    time_off_id: timeOffId,
    provider_id: ids.providerId,
    provider_location_id: null,
    start_date: '2026-12-24',
    end_date: '2026-12-26',
    start_local: '12:00',
    end_local: null,
    note: 'Holidays',
    created_by_user_id: 'us_7c41e9b2',
    created_at: '2026-11-30T15:02:11.000Z',
  };
  const visitReason: Json = {
    visit_reason_id: ids.visitReasonId, name: 'Psychiatry consultation', offered: true,
    duration_minutes: { new: 90, existing: 30 }, directory_duration_minutes: { new: 60, existing: 30 }, overridden: true,
  };
  const schedule: Json = {
    provider_location_id: plId,
    provider_id: ids.providerId,
    location_id: ids.locationId,
    time_zone: 'America/Chicago',
    active: true,
    weekly_hours: hours,
    time_off: [timeOff],
    confirmation_type: 'manual',
    required_fields: [],
    accepts_booking_requests_from: ['in_network', 'self_pay'],
    insurance_managed_at_practice: false,
    insurance_plan_ids: ['ip_bcbs_ppo'],
    visit_reasons: [visitReason],
  };
  const stranded: Json[] = [{ appointment_id: ids.appointmentId, provider_location_id: plId, start_time: '2026-12-24T14:00:00-06:00', status: 'confirmed', reason: 'outside_open_time' }];
  const plPath = '/practice/v1/provider_locations/{provider_location_id}';
  return {
    [`GET ${plPath}/schedule`]: { response: { request_id: 'req_3f9a1c', data: schedule } },
    [`PUT ${plPath}/weekly_hours`]: {
      request: { hours, dry_run: true },
      response: { request_id: 'req_3f9a1c', saved: false, stranded: [], data: hours },
    },
    [`PATCH ${plPath}/settings`]: {
      request: { confirmation_type: 'manual', accepts_booking_requests_from: ['in_network', 'self_pay'] },
      response: { request_id: 'req_3f9a1c', data: schedule },
    },
    [`GET ${plPath}/visit_reasons`]: { response: { request_id: 'req_3f9a1c', data: [visitReason] } },
    [`PUT ${plPath}/visit_reasons`]: {
      request: { visit_reasons: [{ visit_reason_id: ids.visitReasonId, duration_minutes: { new: 90 } }], dry_run: true },
      response: {
        request_id: 'req_3f9a1c', saved: false,
        stranded: [{ appointment_id: ids.appointmentId, provider_location_id: plId, start_time: '2026-12-24T14:00:00-06:00', status: 'confirmed', reason: 'overlaps_next_booking' }],
        data: [visitReason],
      },
    },
    'GET /practice/v1/time_off': { response: { request_id: 'req_3f9a1c', data: [timeOff] } },
    'POST /practice/v1/time_off': {
      request: { provider_id: ids.providerId, start_date: '2026-12-24', end_date: '2026-12-26', start_local: '12:00', note: 'Holidays', allow_stranded: true },
      response: { request_id: 'req_3f9a1c', saved: true, stranded, data: timeOff },
    },
    'DELETE /practice/v1/time_off/{time_off_id}': { response: { request_id: 'req_3f9a1c', data: { time_off_id: timeOffId } } },
  };
}
