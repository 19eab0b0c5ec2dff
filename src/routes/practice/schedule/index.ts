/**
 * The Practice API's schedule routes (docs/scheduling.md; docs/decisions/0014-practice-workspace.md,
 * "Schedules"): a provider-location's schedule, its weekly hours and settings, and time off. The
 * caller is `req.staff` (set by the practice guard, which this plugin is registered under); reads
 * need `practice.read`, changes `practice.write`. The practice always comes from the caller.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../../config.js';
import type { Db } from '../../../db/database.js';
import { updateProviderLocationSettings, type ProviderLocationSettingsInput } from '../../../domain/practices/schedule/settings.js';
import { addTimeOff, listTimeOff, removeTimeOff, timeOffErrors } from '../../../domain/practices/schedule/time-off.js';
import { getSchedule } from '../../../domain/practices/schedule/view.js';
import { replaceWeeklyHours, type WeeklyHoursBlock } from '../../../domain/practices/schedule/weekly-hours.js';
import { requirePracticeScope, type PracticeScope } from '../../../domain/practices/staff-principal.js';
import { staffOf } from '../../../http/practice-request.js';
import { errorResponses } from '../../v1/common-schemas.js';
import { changeOut, PlParams, ScheduleOut, SettingsIn, TimeOffIn, TimeOffOut, TimeOffParams, TimeOffQuery, WeeklyHoursIn } from './schemas.js';

export interface PracticeScheduleRouteDeps {
  config: Config;
  db: Db;
}

const tags = ['practice'];

export const practiceScheduleRoutes: FastifyPluginAsyncTypebox<PracticeScheduleRouteDeps> = async (app, { db }) => {
  const caller = (req: Parameters<typeof staffOf>[0], scope: PracticeScope) => {
    const staff = staffOf(req);
    requirePracticeScope(staff, scope);
    return staff;
  };
  const plPath = '/practice/v1/provider_locations/:provider_location_id';

  app.get(`${plPath}/schedule`, {
    schema: {
      tags,
      summary: "Read a provider-location's schedule",
      description: 'Weekly hours, time off from today on, booking settings, accepted insurance plans and visit reasons with their durations per patient type. A provider user reads only their own.',
      params: PlParams,
      response: { 200: Type.Object({ request_id: Type.String(), data: ScheduleOut }), ...errorResponses(404) },
    },
  }, async (req) => ({ request_id: String(req.id), data: await getSchedule(db, caller(req, 'practice.read'), req.params.provider_location_id) }));

  app.put(`${plPath}/weekly_hours`, {
    schema: {
      tags,
      summary: "Replace a provider-location's weekly hours",
      description: 'Replaces every weekly block (the directory document\'s blocks and rules). Live appointments the change would leave outside open time are answered with `dry_run`, refuse the change (409 naming each) unless `allow_stranded` is true. Free and blocked times show in `/v1` availability at once.',
      params: PlParams,
      body: WeeklyHoursIn,
      response: { 200: changeOut(Type.Array(WeeklyHoursIn.properties.hours.items)), ...errorResponses(400, 404, 409) },
    },
  }, async (req) => {
    const { hours, dry_run, allow_stranded } = req.body;
    // The schema admits only the enumerated patient types.
    const out = await replaceWeeklyHours(db, caller(req, 'practice.write'), req.params.provider_location_id, hours as WeeklyHoursBlock[], { dryRun: !!dry_run, allowStranded: !!allow_stranded });
    return { request_id: String(req.id), saved: out.saved, stranded: out.stranded, data: out.result };
  });

  app.patch(`${plPath}/settings`, {
    schema: {
      tags,
      summary: "Change a provider-location's booking settings",
      description: 'Confirmation type, required booking fields, whose booking requests it takes and its insurance plans (the directory document\'s values and rules); fields left out keep their value. Answers the schedule.',
      params: PlParams,
      body: SettingsIn,
      response: { 200: Type.Object({ request_id: Type.String(), data: ScheduleOut }), ...errorResponses(400, 404, 409) },
    },
  }, async (req) => {
    const staff = caller(req, 'practice.write');
    // The schema admits only the enumerated values.
    await updateProviderLocationSettings(db, staff, req.params.provider_location_id, req.body as ProviderLocationSettingsInput);
    return { request_id: String(req.id), data: await getSchedule(db, staff, req.params.provider_location_id) };
  });

  app.get('/practice/v1/time_off', {
    schema: {
      tags,
      summary: "List the practice's time off",
      description: 'Time off overlapping the local dates `from`…`to` (each optional), of one provider when `provider_id` is given, by start date (at most 1,000).',
      querystring: TimeOffQuery,
      response: { 200: Type.Object({ request_id: Type.String(), data: Type.Array(TimeOffOut) }), ...errorResponses(400, 404) },
    },
  }, async (req) => ({
    request_id: String(req.id),
    data: await listTimeOff(db, caller(req, 'practice.read'), { providerId: req.query.provider_id, from: req.query.from, to: req.query.to }),
  }));

  app.post('/practice/v1/time_off', {
    config: { alsoCheck: (req) => timeOffErrors((req.body ?? {}) as Record<string, unknown>) },
    schema: {
      tags,
      summary: 'Add time off',
      description: 'Closes a provider (every location) or one provider-location for local dates `start_date`…`end_date`, whole days, or from `start_local` on the first date to `end_local` on the last. Live appointments inside are answered with `dry_run`, refuse it (409 naming each) unless `allow_stranded` is true. The closed time leaves `/v1` availability at once.',
      body: TimeOffIn,
      response: { 200: changeOut(TimeOffOut), ...errorResponses(400, 404, 409) },
    },
  }, async (req) => {
    const { dry_run, allow_stranded, ...input } = req.body;
    const out = await addTimeOff(db, caller(req, 'practice.write'), input, { dryRun: !!dry_run, allowStranded: !!allow_stranded });
    return { request_id: String(req.id), saved: out.saved, stranded: out.stranded, data: out.result };
  });

  app.delete('/practice/v1/time_off/:time_off_id', {
    schema: {
      tags,
      summary: 'Remove time off',
      description: 'The freed time shows in `/v1` availability at once.',
      params: TimeOffParams,
      response: { 200: Type.Object({ request_id: Type.String(), data: Type.Object({ time_off_id: Type.String() }) }), ...errorResponses(404) },
    },
  }, async (req) => {
    await removeTimeOff(db, caller(req, 'practice.write'), req.params.time_off_id);
    return { request_id: String(req.id), data: { time_off_id: req.params.time_off_id } };
  });
};
