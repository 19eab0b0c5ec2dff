/**
 * A practice's staff (docs/decisions/0014-practice-workspace.md, "Accounts"; docs/auth.md, "Practice
 * accounts and sign-in"): `GET`, `POST /practice/v1/staff` (an invitation, its link answered once) and
 * `DELETE /practice/v1/staff/{user_id}`. Practice admins only (`practice.admin`); the practice is the
 * caller's, so a member of another practice is 404.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { inviteStaff, invitationUrl } from '../../domain/practices/invitations.js';
import { listMembers, removeMember } from '../../domain/practices/members.js';
import { requirePracticeScope } from '../../domain/practices/staff-principal.js';
import { staffOf } from '../../http/practice-request.js';
import { errorResponses } from '../v1/common-schemas.js';
import type { PracticeRouteDeps } from './deps.js';

const Role = Type.Union([Type.Literal('practice_admin'), Type.Literal('practice_staff')]);
const Member = Type.Object({ user_id: Type.String(), email: Type.String(), role: Role, created_at: Type.String({ format: 'date-time' }) });
const security = [{ PracticeWorkspaceFlow: ['practice.admin'] }];

export const practiceStaffRoutes: FastifyPluginAsyncTypebox<PracticeRouteDeps> = async (app, { config, db }) => {
  const env = config.appEnv;

  app.get(
    '/staff',
    {
      schema: {
        tags: ['practice'],
        summary: 'List the practice\'s staff',
        description: 'Every staff login of the caller\'s practice with its role, oldest first. Needs `practice.admin` (practice admins).',
        security,
        response: { 200: Type.Object({ data: Type.Array(Member) }), ...errorResponses() },
      },
    },
    async (req) => {
      const staff = staffOf(req);
      requirePracticeScope(staff, 'practice.admin');
      return { data: await listMembers(db, env, staff.practiceId) };
    },
  );

  app.post(
    '/staff',
    {
      schema: {
        tags: ['practice'],
        summary: 'Invite a staff member',
        description: 'Creates a one-time invitation for an e-mail address and role. The answer carries the invitation link once (it is stored only as a hash); whoever opens it within 7 days sets a password and can then sign in to the workspace. Needs `practice.admin`. 400 when the address already has an account.',
        security,
        body: Type.Object({ email: Type.String({ minLength: 1, maxLength: 255 }), role: Role }),
        response: {
          201: Type.Object({
            data: Type.Object({ email: Type.String(), role: Role, expires_at: Type.String({ format: 'date-time' }), invitation_url: Type.String({ description: 'Shown once' }) }),
          }),
          ...errorResponses(400),
        },
      },
    },
    async (req, reply) => {
      const staff = staffOf(req);
      requirePracticeScope(staff, 'practice.admin');
      const inv = await inviteStaff(db, staff, req.body);
      return reply.code(201).send({
        data: { email: inv.email, role: inv.role, expires_at: inv.expiresAt.toISOString(), invitation_url: invitationUrl(config.publicBaseUrl, inv.token) },
      });
    },
  );

  app.delete(
    '/staff/:user_id',
    {
      schema: {
        tags: ['practice'],
        summary: 'Remove a staff member',
        description: 'Removes a member of the caller\'s practice: their sessions end and their tokens stop working at once. 404 for anyone who is not a member of this practice; 409 for the practice\'s last admin. Needs `practice.admin`.',
        security,
        params: Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: { 200: Type.Object({ data: Type.Object({ user_id: Type.String({ description: 'The member removed' }) }) }), ...errorResponses(404, 409) },
      },
    },
    async (req) => {
      const staff = staffOf(req);
      requirePracticeScope(staff, 'practice.admin');
      await removeMember(db, env, staff.practiceId, req.params.user_id);
      return { data: { user_id: req.params.user_id } };
    },
  );
};
