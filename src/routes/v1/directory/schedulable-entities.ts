/**
 * `GET /v1/schedulable_entities` (docs/api/directory.md#schedulable-entities): needs `external.schedulable_entity.read`;
 * no `request_id` in its 200 (docs/api/conventions.md#requests-and-responses).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { recentChangeSummary } from '../../../domain/directory/recent-change-summary.js';
import { listSchedulableEntities, SCHEDULE_TYPES } from '../../../domain/directory/schedulable-entities.js';
import { invalidInput } from '../../../domain/errors.js';
import { commaList, errorResponses, nextUrl, pageEnvelope, pagingQuery } from '../common-schemas.js';
import { callerOf, type DirectoryDeps } from './context.js';
import { RecentChangeSummary, SchedulableEntity } from './schemas.js';

export const schedulableEntityRoutes: FastifyPluginAsyncTypebox<DirectoryDeps> = async (app, { config, reads: db, availabilityCache }) => {
  app.get(
    '/v1/schedulable_entities',
    {
      onRequest: app.guard({ scope: 'external.schedulable_entity.read' }),
      schema: {
        tags: ['directory'],
        summary: 'List the schedulable entities (provider-locations) of your directory',
        querystring: Type.Object({
          ...pagingQuery({ sizeMax: 10000, sizeDefault: 5000 }),
          schedule_types: Type.Optional(Type.String({ maxLength: 500, description: `Comma-delimited: ${SCHEDULE_TYPES.join(', ')}` })),
          recent_changes_72hrs: Type.Optional(Type.Boolean()),
        }),
        response: {
          200: pageEnvelope(Type.Object({ recent_change_summary: RecentChangeSummary, schedulable_entities: Type.Array(SchedulableEntity) }), {
            withRequestId: false,
          }),
          ...errorResponses(400),
        },
      },
    },
    async (req, reply) => {
      const { page, page_size } = req.query;
      const types = commaList(req.query.schedule_types);
      const unknown = types.filter((t) => !(SCHEDULE_TYPES as readonly string[]).includes(t));
      if (unknown.length) throw invalidInput('schedule_types', `unknown schedule type(s) ${unknown.join(', ')}; known: ${SCHEDULE_TYPES.join(', ')}`);
      const caller = callerOf(req, config);
      const now = new Date();
      const wanted = types.length === 0 || types.includes('provider_location');
      const [list, summary] = await Promise.all([
        wanted
          ? listSchedulableEntities(db, caller, {
              page,
              pageSize: page_size,
              recentOnly: req.query.recent_changes_72hrs === true,
              publicBaseUrl: config.publicBaseUrl,
              now,
              ...(availabilityCache ? { cache: availabilityCache } : {}),
            })
          : Promise.resolve({ total: 0, entities: [] }),
        recentChangeSummary(db, caller, now),
      ]);
      // A page of 10,000 entities is ~8.6 MB of JSON: `JSON.stringify` writes it in about half the time
      // the schema's serializer takes. The page holds exactly the schema's fields (the domain builds
      // each entity with those keys only; test/directory/schedulable-entities.test.ts checks a page
      // against the schema), so the output is the same JSON.
      reply.serializer(JSON.stringify).type('application/json; charset=utf-8');
      return {
        page,
        page_size,
        total_count: list.total,
        next_url: nextUrl(config.publicBaseUrl, req, page, page_size, list.total),
        data: { recent_change_summary: summary, schedulable_entities: list.entities },
      };
    },
  );
};
