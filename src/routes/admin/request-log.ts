/**
 * Admin API: a developer's request log (docs/api/request-log.md), for the operator helping a
 * developer find a call by its `request_id`. The developer console reads the same log.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { readRequestLog } from '../../domain/request-log/read.js';

const security = [{ AdminToken: [] }];

export const RequestLogItem = Type.Object({
  request_id: Type.String(),
  at: Type.String({ format: 'date-time' }),
  method: Type.String(),
  path: Type.String({ description: 'The path and the names of its query parameters; values are never kept.' }),
  status: Type.Integer(),
  latency_ms: Type.Number(),
  client_id: Type.String(),
  error: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'The error body of a refused call; null for a success.' }),
});

export const RequestLogQuery = Type.Object({
  request_id: Type.Optional(Type.String({ maxLength: 100 })),
  status: Type.Optional(Type.String({ maxLength: 7, description: '`success` (below 400), `error` (400 and above) or one status code.' })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
});

export const adminRequestLogRoutes: FastifyPluginAsyncTypebox<{ config: Config; db: Db }> = async (app, { config, db }) => {
  app.get(
    '/developers/:developer_id/request-log',
    {
      schema: {
        tags: ['admin'],
        summary: "A developer's API calls, newest first",
        security,
        params: Type.Object({ developer_id: Type.String({ maxLength: 100 }) }),
        querystring: RequestLogQuery,
        response: { 200: Type.Object({ data: Type.Object({ requests: Type.Array(RequestLogItem), next_cursor: Type.Union([Type.String(), Type.Null()]) }) }) },
      },
    },
    async (req) => ({ data: await readRequestLog(db, config.appEnv, req.params.developer_id, req.query) }),
  );
};
