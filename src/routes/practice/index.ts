/**
 * The Practice API at `/practice/v1` (docs/decisions/0014-practice-workspace.md, "One API, two
 * clients"): the practice guard on every route of this scope and of the sub-plugins registered in
 * it, `GET /me`, and the sub-areas (staff, appointments, schedule).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestAsyncHookHandler } from 'fastify';
import { Type } from 'typebox';
import { practiceOverview } from '../../domain/practices/overview.js';
import { requirePracticeScope } from '../../domain/practices/staff-principal.js';
import { staffOf } from '../../http/practice-request.js';
import { errorResponses } from '../v1/common-schemas.js';
import { practiceAppointmentRoutes } from './appointments/index.js';
import type { PracticeRouteDeps } from './deps.js';
import { practiceSecurity } from './security.js';
import { practiceScheduleRoutes } from './schedule/index.js';
import { practiceStaffRoutes } from './staff.js';

export type { PracticeRouteDeps };

export { practiceSecurity };

const ProviderLocation = Type.Object({
  provider_location_id: Type.String(),
  location_id: Type.String(),
  location_name: Type.Union([Type.String(), Type.Null()]),
  time_zone: Type.String({ description: 'IANA zone of the location' }),
  confirmation_type: Type.String({ description: '`auto` or `manual`' }),
});

const MeResponse = Type.Object({
  data: Type.Object({
    user_id: Type.String(),
    email: Type.String(),
    role: Type.Union([Type.Literal('practice_admin'), Type.Literal('practice_staff'), Type.Literal('provider')]),
    practice: Type.Object({ id: Type.String(), name: Type.String() }),
    scopes: Type.Array(Type.String(), { description: 'The token\'s scopes, capped by the role' }),
    providers: Type.Array(
      Type.Object({ provider_id: Type.String(), name: Type.String(), provider_locations: Type.Array(ProviderLocation) }),
      { description: 'The practice\'s providers; a provider user\'s own only' },
    ),
  }),
});

/**
 * The `/practice/v1` scope. `practiceGuard` is the `onRequest` hook of src/http/practice-guard.ts,
 * installed for every route registered here (the sub-plugins included).
 */
export const practiceRoutes: FastifyPluginAsyncTypebox<PracticeRouteDeps & { practiceGuard: onRequestAsyncHookHandler }> = async (app, opts) => {
  // Sub-plugins get exactly the `/v1` areas' deps (not `prefix`: they inherit this scope's).
  const deps: PracticeRouteDeps = { config: opts.config, db: opts.db, outcomes: opts.outcomes };
  const { db } = deps;
  const { practiceGuard } = opts;
  app.addHook('onRequest', practiceGuard);

  app.get(
    '/me',
    {
      schema: {
        tags: ['practice'],
        summary: 'Who is signed in: user, role, practice and its providers',
        description: 'The signed-in staff member (or provider user), their role and scopes, their practice, and the practice\'s providers with their provider-locations (a provider user: their own only). Needs `practice.read`.',
        security: practiceSecurity('practice.read'),
        response: { 200: MeResponse, ...errorResponses(404) },
      },
    },
    async (req) => {
      const staff = staffOf(req);
      requirePracticeScope(staff, 'practice.read');
      return { data: await practiceOverview(db, staff) };
    },
  );

  await app.register(practiceStaffRoutes, deps);

  // The sub-areas, each with `deps` (the same object as above); appointments also take the live-event options.
  await app.register(practiceAppointmentRoutes, { ...deps, ...(opts.appointmentChanges && { appointmentChanges: opts.appointmentChanges }), ...(opts.eventPollMs && { eventPollMs: opts.eventPollMs }) });
  await app.register(practiceScheduleRoutes, deps);
};
