/**
 * Reference operations: NPIs (docs/api/directory.md#npi-list), specialties and visit reasons
 * (docs/api/directory.md#specialties-and-visit-reasons). Any valid token, anonymous included (docs/api/auth.md#scopes).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { listNpis } from '../../../domain/directory/npi-list.js';
import { getSpecialty, getVisitReason, listSpecialties, listVisitReasons } from '../../../domain/directory/reference-data.js';
import { notFound } from '../../../domain/errors.js';
import { errorResponses, nextUrl, pageEnvelope, pagingQuery } from '../common-schemas.js';
import { callerOf, type DirectoryDeps } from './context.js';
import { CareCategory, Specialty, VisitReason } from './schemas.js';

export const referenceRoutes: FastifyPluginAsyncTypebox<DirectoryDeps> = async (app, { config, reads: db, keptReference }) => {
  const anyToken = app.guard({ allowAnonymous: true });

  app.get(
    '/v1/reference/npi',
    {
      onRequest: anyToken,
      schema: {
        tags: ['reference'],
        summary: 'List the NPIs of the active providers in your directory',
        querystring: Type.Object(pagingQuery({ sizeMax: 60000, sizeDefault: 60000 })),
        response: { 200: pageEnvelope(Type.Object({ npis: Type.Array(Type.String()) })), ...errorResponses(400) },
      },
    },
    async (req) => {
      const { page, page_size } = req.query;
      const r = await listNpis(db, callerOf(req, config), { page, pageSize: page_size });
      return {
        request_id: String(req.id),
        page,
        page_size,
        total_count: r.total,
        next_url: nextUrl(config.publicBaseUrl, req, page, page_size, r.total),
        data: { npis: r.npis },
      };
    },
  );

  app.get(
    '/v1/specialties',
    {
      onRequest: anyToken,
      schema: {
        tags: ['reference'],
        summary: 'List specialties',
        querystring: Type.Object({ ...pagingQuery({ pageMax: 200, sizeMax: 500, sizeDefault: 100 }), care_category: Type.Optional(CareCategory) }),
        // docs/api/conventions.md#requests-and-responses: no request_id in this 200.
        response: { 200: pageEnvelope(Type.Array(Specialty), { withRequestId: false }), ...errorResponses(400) },
      },
    },
    async (req) => {
      const { page, page_size, care_category } = req.query;
      const r = await listSpecialties(db, config.appEnv, { page, pageSize: page_size, careCategory: care_category }, keptReference);
      return { page, page_size, total_count: r.total, next_url: nextUrl(config.publicBaseUrl, req, page, page_size, r.total), data: r.items };
    },
  );

  app.get(
    '/v1/specialties/:specialty_id',
    {
      onRequest: anyToken,
      schema: {
        tags: ['reference'],
        summary: 'Read one specialty',
        params: Type.Object({ specialty_id: Type.String({ pattern: '^sp_.+', maxLength: 200 }) }),
        response: { 200: Type.Object({ request_id: Type.String(), data: Specialty }), ...errorResponses(400, 404) },
      },
    },
    async (req) => {
      const s = await getSpecialty(db, config.appEnv, req.params.specialty_id);
      if (!s) throw notFound(`no specialty ${req.params.specialty_id}`, 'specialty_id');
      return { request_id: String(req.id), data: s };
    },
  );

  app.get(
    '/v1/visit_reasons',
    {
      onRequest: anyToken,
      schema: {
        tags: ['reference'],
        summary: 'List visit reasons',
        querystring: Type.Object({
          ...pagingQuery({ pageMax: 200, sizeMax: 500, sizeDefault: 100 }),
          specialty_id: Type.Optional(Type.String({ maxLength: 200 })),
        }),
        response: { 200: pageEnvelope(Type.Array(VisitReason)), ...errorResponses(400) },
      },
    },
    async (req) => {
      const { page, page_size, specialty_id } = req.query;
      const r = await listVisitReasons(db, config.appEnv, { page, pageSize: page_size, specialtyId: specialty_id }, keptReference);
      return {
        request_id: String(req.id),
        page,
        page_size,
        total_count: r.total,
        next_url: nextUrl(config.publicBaseUrl, req, page, page_size, r.total),
        data: r.items,
      };
    },
  );

  app.get(
    '/v1/visit_reasons/:visit_reason_id',
    {
      onRequest: anyToken,
      schema: {
        tags: ['reference'],
        summary: 'Read one visit reason',
        params: Type.Object({ visit_reason_id: Type.String({ pattern: '^pc_.+', maxLength: 200 }) }),
        response: { 200: Type.Object({ request_id: Type.String(), data: VisitReason }), ...errorResponses(400, 404) },
      },
    },
    async (req) => {
      const v = await getVisitReason(db, config.appEnv, req.params.visit_reason_id);
      if (!v) throw notFound(`no visit reason ${req.params.visit_reason_id}`, 'visit_reason_id');
      return { request_id: String(req.id), data: v };
    },
  );
};
