/**
 * `POST /admin/v1/practices/{practice_id}/admins` (docs/api/admin.md#practice-admins): the operator
 * creates a practice's admin, with a password or with a one-time invitation link that sets it.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { invitationUrl } from '../../domain/practices/invitations.js';
import { createPracticeAdmin } from '../../domain/practices/members.js';
import { ErrorBody } from '../v1/common-schemas.js';

export const adminPracticeRoutes: FastifyPluginAsyncTypebox<{ config: Config; db: Db }> = async (app, { config, db }) => {
  app.post(
    '/practices/:practice_id/admins',
    {
      schema: {
        tags: ['admin'],
        summary: 'Create an admin of a practice',
        description:
          'Creates a staff login with the role `practice_admin` for a practice of the directory. With `password` the admin can sign in to the practice workspace at once; without, the answer carries a one-time `invitation_url` (valid 7 days, shown once) whose page sets the password. 404 for a practice not in the directory; 400 for an e-mail address that already has an account.',
        security: [{ AdminToken: [] }],
        params: Type.Object({ practice_id: Type.String({ minLength: 1, maxLength: 200 }) }),
        body: Type.Object({
          email: Type.String({ minLength: 1, maxLength: 255 }),
          password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'At least 8 characters; omit to get an invitation link' })),
        }),
        response: {
          201: Type.Object({
            user_id: Type.String(),
            email: Type.String(),
            practice_id: Type.String(),
            role: Type.Literal('practice_admin'),
            invitation_url: Type.Union([Type.String(), Type.Null()], { description: 'Without a password: the one-time link that sets it' }),
            invitation_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
          }),
          404: ErrorBody,
        },
      },
    },
    async (req, reply) => {
      const { practice_id } = req.params;
      const made = await createPracticeAdmin(db, config.appEnv, { practiceId: practice_id, email: req.body.email, ...(req.body.password !== undefined ? { password: req.body.password } : {}) });
      return reply.code(201).send({
        user_id: made.userId,
        email: made.email,
        practice_id,
        role: 'practice_admin' as const,
        invitation_url: made.invitation ? invitationUrl(config.publicBaseUrl, made.invitation.token) : null,
        invitation_expires_at: made.invitation ? made.invitation.expiresAt.toISOString() : null,
      });
    },
  );
};
