/** `PUT /admin/v1/developers/{developer_id}/rate-limit`: the operator's per-developer override. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { setDeveloperRateLimit, UnknownDeveloperError } from '../../domain/developers/rate-limit.js';
import { notFound } from '../../domain/errors.js';

export const adminRateLimitRoutes: FastifyPluginAsyncTypebox<{ config: Config; db: Db }> = async (app, { config, db }) => {
  app.put(
    '/developers/:developer_id/rate-limit',
    {
      schema: {
        tags: ['admin'],
        summary: "Override a developer's requests-per-minute limit (null: the default)",
        security: [{ AdminToken: [] }],
        params: Type.Object({ developer_id: Type.String() }),
        body: Type.Object({ rate_limit_per_minute: Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()]) }),
        response: { 200: Type.Object({ developer_id: Type.String(), rate_limit_per_minute: Type.Integer() }) },
      },
    },
    async (req) => {
      try {
        await setDeveloperRateLimit(db, config.appEnv, req.params.developer_id, req.body.rate_limit_per_minute);
      } catch (e) {
        if (e instanceof UnknownDeveloperError) throw notFound(e.message, 'developer_id');
        throw e;
      }
      return { developer_id: req.params.developer_id, rate_limit_per_minute: req.body.rate_limit_per_minute ?? config.rateLimitPerMinute };
    },
  );
};
