/**
 * The Practice API's schedule routes (docs/scheduling.md, "Practice schedules";
 * docs/decisions/0014-practice-workspace.md, "Schedules"): a provider-location's schedule, its weekly
 * hours and settings, and time off. The caller is `req.staff` (set by the practice guard, which this
 * plugin is registered under, inside the `/practice/v1` scope); reads need `practice.read`, changes
 * `practice.write`. The practice always comes from the caller. Every saved change writes one
 * `practice_audit_log` row with the staff member as actor (in the change's transaction) and one
 * `schedule_changed` log line with ids only (docs/operator-guide.md, "Logs").
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../../config.js';
import type { Db } from '../../../db/database.js';
import { updateProviderLocationSettings, type ProviderLocationSettingsInput } from '../../../domain/practices/schedule/settings.js';
import { addTimeOff, listTimeOff, removeTimeOff, timeOffErrors, timeOffQueryErrors } from '../../../domain/practices/schedule/time-off.js';
import { getSchedule } from '../../../domain/practices/schedule/view.js';
import { listVisitReasons, setVisitReasons, visitReasonRequestErrors, type VisitReasonSetting } from '../../../domain/practices/schedule/visit-reasons.js';
import { hoursErrors, replaceWeeklyHours, type WeeklyHoursBlock } from '../../../domain/practices/schedule/weekly-hours.js';
import { requirePracticeScope, type PracticeScope, type StaffPrincipal } from '../../../domain/practices/staff-principal.js';
import { staffOf } from '../../../http/practice-request.js';
import { errorResponses } from '../../v1/common-schemas.js';
import { changeOut, PlParams, ScheduleOut, SettingsIn, TimeOffIn, TimeOffOut, TimeOffParams, TimeOffQuery, VisitReasonOut, VisitReasonsIn, WeeklyHoursIn } from './schemas.js';

export interface PracticeScheduleRouteDeps {
  config: Config;
  db: Db;
}

const tags = ['practice'];
const security = (scope: PracticeScope) => [{ PracticeWorkspaceFlow: [scope] }];

/** What kind of schedule change a `schedule_changed` log line reports. */
type ScheduleChange = 'weekly_hours_replaced' | 'settings_changed' | 'time_off_added' | 'time_off_removed' | 'visit_reasons_set';

/**
 * Logs one saved schedule change: the event, the change, and ids of the practice, the staff user and
 * what changed, plus how many live appointments it left outside open time. Never patient data: the
 * logger keeps only the fields of `LOGGABLE_FIELDS` (src/http/logger.ts).
 */
function logScheduleChange(
  req: FastifyRequest,
  staff: StaffPrincipal,
  change: ScheduleChange,
  ids: { provider_id?: string; provider_location_id?: string | null; time_off_id?: string; stranded_count?: number },
): void {
  req.log.info({ event: 'schedule_changed', change, practice_id: staff.practiceId, user_id: staff.userId, ...ids }, 'schedule changed');
}

export const practiceScheduleRoutes: FastifyPluginAsyncTypebox<PracticeScheduleRouteDeps> = async (app, { db }) => {
  const caller = (req: FastifyRequest, scope: PracticeScope) => {
    const staff = staffOf(req);
    requirePracticeScope(staff, scope);
    return staff;
  };
  // Relative to the `/practice/v1` scope this plugin is registered in.
  const plPath = '/provider_locations/:provider_location_id';

  app.get(`${plPath}/schedule`, {
    schema: {
      tags,
      summary: "Read a provider-location's schedule",
      description: 'Weekly hours, time off from today on, booking settings, accepted insurance plans and visit reasons with their durations per patient type. A provider user reads only their own.',
      security: security('practice.read'),
      params: PlParams,
      response: { 200: Type.Object({ request_id: Type.String(), data: ScheduleOut }), ...errorResponses(400, 404) },
    },
  }, async (req) => ({ request_id: String(req.id), data: await getSchedule(db, caller(req, 'practice.read'), req.params.provider_location_id) }));

  app.put(`${plPath}/weekly_hours`, {
    config: { alsoCheck: (req) => hoursErrors(db, staffOf(req).env, (req.body as { hours?: unknown } | null)?.hours) },
    schema: {
      tags,
      summary: "Replace a provider-location's weekly hours",
      description: 'Replaces every weekly block (the directory document\'s blocks and rules). Live appointments the change would leave outside open time are answered with `dry_run`, refuse the change (409 naming each) unless `allow_stranded` is true. Free and blocked times show in `/v1` availability at once.',
      security: security('practice.write'),
      params: PlParams,
      body: WeeklyHoursIn,
      response: { 200: changeOut(Type.Array(WeeklyHoursIn.properties.hours.items)), ...errorResponses(400, 404, 409) },
    },
  }, async (req) => {
    const staff = caller(req, 'practice.write');
    const { hours, dry_run, allow_stranded } = req.body;
    const plId = req.params.provider_location_id;
    // The schema admits only the enumerated patient types.
    const out = await replaceWeeklyHours(db, staff, plId, hours as WeeklyHoursBlock[], { dryRun: !!dry_run, allowStranded: !!allow_stranded, requestId: String(req.id) });
    if (out.saved) logScheduleChange(req, staff, 'weekly_hours_replaced', { provider_location_id: plId, stranded_count: out.stranded.length });
    return { request_id: String(req.id), saved: out.saved, stranded: out.stranded, data: out.result };
  });

  app.patch(`${plPath}/settings`, {
    schema: {
      tags,
      summary: "Change a provider-location's booking settings",
      description: 'Confirmation type, required booking fields, whose booking requests it takes and its insurance plans (the directory document\'s values and rules); fields left out keep their value. Answers the schedule.',
      security: security('practice.write'),
      params: PlParams,
      body: SettingsIn,
      response: { 200: Type.Object({ request_id: Type.String(), data: ScheduleOut }), ...errorResponses(400, 404, 409) },
    },
  }, async (req) => {
    const staff = caller(req, 'practice.write');
    const plId = req.params.provider_location_id;
    // The schema admits only the enumerated values.
    await updateProviderLocationSettings(db, staff, plId, req.body as ProviderLocationSettingsInput, { requestId: String(req.id) });
    logScheduleChange(req, staff, 'settings_changed', { provider_location_id: plId });
    return { request_id: String(req.id), data: await getSchedule(db, staff, plId) };
  });

  app.get(`${plPath}/visit_reasons`, {
    schema: {
      tags,
      summary: "List a provider-location's visit reasons",
      description: 'The visit reasons the provider accepts (the directory\'s), whether the practice offers each at this provider-location, and their durations per patient type: the effective ones (the practice\'s where it set one, else the directory\'s, which `/v1` availability and booking use) and the directory\'s. A provider user reads only their own.',
      security: security('practice.read'),
      params: PlParams,
      response: { 200: Type.Object({ request_id: Type.String(), data: Type.Array(VisitReasonOut) }), ...errorResponses(400, 404) },
    },
  }, async (req) => ({ request_id: String(req.id), data: await listVisitReasons(db, caller(req, 'practice.read'), req.params.provider_location_id) }));

  app.put(`${plPath}/visit_reasons`, {
    config: {
      alsoCheck: (req) => visitReasonRequestErrors(db, staffOf(req), (req.params as { provider_location_id?: unknown } | null)?.provider_location_id,
        (req.body as { visit_reasons?: unknown } | null)?.visit_reasons),
    },
    schema: {
      tags,
      summary: "Set a provider-location's visit reasons and durations",
      description: 'Replaces the practice\'s overrides at this provider-location: per visit reason the provider accepts, whether it is offered here and its duration per patient type (left out: the directory\'s). A reason left out goes back to the directory\'s values; a directory re-import keeps the overrides of reasons the provider still accepts. The new values apply to `/v1` availability, booking and the service\'s checks at once; booked appointments keep their times. A longer duration that would put a live appointment outside open time or into the provider\'s next booking, or a reason no longer offered, strands it: answered with `dry_run`, refusing the change (409 naming each) unless `allow_stranded` is true.',
      security: security('practice.write'),
      params: PlParams,
      body: VisitReasonsIn,
      response: { 200: changeOut(Type.Array(VisitReasonOut)), ...errorResponses(400, 404, 409) },
    },
  }, async (req) => {
    const staff = caller(req, 'practice.write');
    const { visit_reasons, dry_run, allow_stranded } = req.body;
    const plId = req.params.provider_location_id;
    const out = await setVisitReasons(db, staff, plId, visit_reasons as VisitReasonSetting[], { dryRun: !!dry_run, allowStranded: !!allow_stranded, requestId: String(req.id) });
    if (out.saved) logScheduleChange(req, staff, 'visit_reasons_set', { provider_location_id: plId, stranded_count: out.stranded.length });
    return { request_id: String(req.id), saved: out.saved, stranded: out.stranded, data: out.result };
  });

  app.get('/time_off', {
    config: { alsoCheck: (req) => timeOffQueryErrors((req.query ?? {}) as Record<string, unknown>) },
    schema: {
      tags,
      summary: "List the practice's time off",
      description: 'Time off overlapping the local dates `from`…`to` (each optional), of one provider when `provider_id` is given, by start date (at most 1,000).',
      security: security('practice.read'),
      querystring: TimeOffQuery,
      response: { 200: Type.Object({ request_id: Type.String(), data: Type.Array(TimeOffOut) }), ...errorResponses(400, 404) },
    },
  }, async (req) => ({
    request_id: String(req.id),
    data: await listTimeOff(db, caller(req, 'practice.read'), { providerId: req.query.provider_id, from: req.query.from, to: req.query.to }),
  }));

  app.post('/time_off', {
    config: { alsoCheck: (req) => timeOffErrors((req.body ?? {}) as Record<string, unknown>) },
    schema: {
      tags,
      summary: 'Add time off',
      description: 'Closes a provider (every location) or one provider-location for local dates `start_date`…`end_date`, whole days, or from `start_local` on the first date to `end_local` on the last. Live appointments inside are answered with `dry_run`, refuse it (409 naming each) unless `allow_stranded` is true. The closed time leaves `/v1` availability at once.',
      security: security('practice.write'),
      body: TimeOffIn,
      response: { 200: changeOut(TimeOffOut), ...errorResponses(400, 404, 409) },
    },
  }, async (req) => {
    const staff = caller(req, 'practice.write');
    const { dry_run, allow_stranded, ...input } = req.body;
    const out = await addTimeOff(db, staff, input, { dryRun: !!dry_run, allowStranded: !!allow_stranded, requestId: String(req.id) });
    if (out.saved) {
      logScheduleChange(req, staff, 'time_off_added', {
        provider_id: out.result.provider_id, provider_location_id: out.result.provider_location_id, time_off_id: out.result.time_off_id, stranded_count: out.stranded.length,
      });
    }
    return { request_id: String(req.id), saved: out.saved, stranded: out.stranded, data: out.result };
  });

  app.delete('/time_off/:time_off_id', {
    schema: {
      tags,
      summary: 'Remove time off',
      description: 'The freed time shows in `/v1` availability at once.',
      security: security('practice.write'),
      params: TimeOffParams,
      response: { 200: Type.Object({ request_id: Type.String(), data: Type.Object({ time_off_id: Type.String() }) }), ...errorResponses(400, 404) },
    },
  }, async (req) => {
    const staff = caller(req, 'practice.write');
    const removed = await removeTimeOff(db, staff, req.params.time_off_id, { requestId: String(req.id) });
    logScheduleChange(req, staff, 'time_off_removed', { ...removed, time_off_id: req.params.time_off_id });
    return { request_id: String(req.id), data: { time_off_id: req.params.time_off_id } };
  });
};
