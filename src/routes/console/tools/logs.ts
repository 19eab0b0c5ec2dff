/**
 * Console API: the developer's request log and usage (docs/console.md, "Request log" and "Usage";
 * docs/api/request-log.md). Thin handlers over src/domain/request-log/read.ts and
 * src/domain/console/usage.ts; the developer in the path must be the signed-in account's
 * (`ownsDeveloper`), else 404.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import { usage } from '../../../domain/console/usage.js';
import { readRequestLog } from '../../../domain/request-log/read.js';
import { USAGE_RETENTION_DAYS } from '../../../domain/request-log/prune.js';
import { RequestLogItem, RequestLogQuery } from '../../admin/request-log.js';
import { errorResponses } from '../../v1/common-schemas.js';
import { DeveloperParams, type ConsoleToolDeps } from './deps.js';

const Nullable = <T extends TSchema>(t: T, description: string) => Type.Union([t, Type.Null()], { description });

const UsageClient = Type.Object({
  client_id: Type.String(),
  kind: Nullable(Type.Union([Type.Literal('machine'), Type.Literal('user')]), '`machine` (the confidential credential) or `user` (the public user client); null for a client no longer known'),
  requests: Type.Integer(),
  errors: Type.Integer({ description: 'Answers with status 400 and above' }),
  error_rate: Type.Number({ minimum: 0, maximum: 1 }),
});

const UsageBody = Type.Object({
  days: Type.Array(
    Type.Object({
      day: Type.String({ format: 'date', description: 'UTC date' }),
      app_id: Nullable(Type.String(), 'The app; null for calls of clients that belong to no app, one row per day'),
      app_name: Nullable(Type.String(), "The app's name; null with `app_id`"),
      requests: Type.Integer({ description: "Calls with any of the app's clients that day" }),
      errors: Type.Integer({ description: 'Answers with status 400 and above' }),
      error_rate: Type.Number({ minimum: 0, maximum: 1, description: '`errors / requests`, rounded to four decimals' }),
      clients: Type.Array(UsageClient, { description: "The app's clients that made calls that day" }),
    }),
    { description: 'Newest day first; within a day, apps oldest first and calls of no app last' },
  ),
  rate_limit: Type.Object({
    per_minute: Type.Integer({ description: 'The limit of each credential' }),
    used_last_minute: Type.Integer({ description: 'Your calls in the last 60 seconds, as logged' }),
    remaining: Type.Integer({ description: '`per_minute - used_last_minute` (at least 0): the least any one credential has left' }),
    by_app: Type.Array(Type.Object({ app_id: Nullable(Type.String(), 'Null: clients of no app'), app_name: Nullable(Type.String(), "The app's name"), requests: Type.Integer() })),
    by_client: Type.Array(Type.Object({ client_id: Type.String(), app_id: Nullable(Type.String(), 'Null: a client of no app'), requests: Type.Integer() })),
  }),
});

export const consoleLogRoutes: FastifyPluginAsyncTypebox<ConsoleToolDeps> = async (app, { config, db, ownsDeveloper, security }) => {
  const env = config.appEnv;
  const tags = ['console'];

  app.get(
    '/developers/:developer_id/request-log',
    {
      schema: {
        tags, security,
        summary: 'Your API calls, newest first',
        description: 'The last 7 days (at most 10,000) of calls made with your credentials: method, path without query values, status, latency, `request_id`, and the error body of a refused call. Search by `request_id`, filter by `status`, page with `next_cursor`. 400 names a bad `status` or `cursor`.',
        params: DeveloperParams,
        querystring: RequestLogQuery,
        response: { 200: Type.Object({ data: Type.Object({ requests: Type.Array(RequestLogItem), next_cursor: Type.Union([Type.String(), Type.Null()]) }) }), ...errorResponses(400, 404) },
      },
    },
    async (req) => {
      await ownsDeveloper(req, req.params.developer_id);
      return { data: await readRequestLog(db, env, req.params.developer_id, req.query) };
    },
  );

  app.get(
    '/developers/:developer_id/usage',
    {
      schema: {
        tags, security,
        summary: 'Your requests, errors and error rate per app and day, and your rate-limit headroom',
        description: `Requests, errors and error rate per app and UTC day (with each app's clients) for the last \`days\` days including today (at most ${USAGE_RETENTION_DAYS}), newest first, and your limit per minute against your calls of the last minute, in all, per app and per client.`,
        params: DeveloperParams,
        querystring: Type.Object({ days: Type.Optional(Type.Integer({ minimum: 1, maximum: USAGE_RETENTION_DAYS, default: 30 })) }),
        response: { 200: Type.Object({ data: UsageBody }), ...errorResponses(400, 404) },
      },
    },
    async (req) => {
      await ownsDeveloper(req, req.params.developer_id);
      return { data: await usage(db, env, req.params.developer_id, { days: req.query.days, defaultPerMinute: config.rateLimitPerMinute }) };
    },
  );
};
