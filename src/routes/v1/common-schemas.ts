/**
 * Route schemas shared by every `/v1` area: the error body (docs/api/errors.md#error-body), the paging query
 * parameters and the paginated envelope (docs/api/appointments.md#list-appointments: `page`, `page_size`, `total_count`,
 * `next_url`, null on the last page), and `next_url` building.
 */
import type { FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';

/** The one error body (docs/api/errors.md#error-body). */
export const ErrorBody = Type.Object(
  {
    request_id: Type.String(),
    error_type: Type.Union([Type.Literal('api_error'), Type.Literal('invalid_request')]),
    errors: Type.Array(Type.Object({ field: Type.Optional(Type.String()), message: Type.String() })),
  },
  { description: 'The error body of every error answer: `errors` names each bad field' },
);

/** Error responses for a route's `response` map: `errorResponses(400, 404)`. */
export function errorResponses(...codes: number[]): Record<number, typeof ErrorBody> {
  return Object.fromEntries([401, 403, ...codes].map((c) => [c, ErrorBody]));
}

/** `page` and `page_size` query properties with the operation's limits. */
export function pagingQuery(limits: { pageMax?: number; sizeMax: number; sizeDefault: number; sizeMin?: number }) {
  return {
    page: Type.Integer({
      minimum: 0,
      ...(limits.pageMax !== undefined ? { maximum: limits.pageMax } : {}),
      default: 0,
      description: 'Zero-based page index',
    }),
    page_size: Type.Integer({ minimum: limits.sizeMin ?? 1, maximum: limits.sizeMax, default: limits.sizeDefault }),
  };
}

/** The paginated envelope around `data`; `withRequestId: false` for the listings that carry none. */
export function pageEnvelope<T extends TSchema>(data: T, opts: { withRequestId?: boolean } = {}) {
  const paging = {
    page: Type.Integer(),
    page_size: Type.Integer(),
    total_count: Type.Integer(),
    next_url: Type.Union([Type.String(), Type.Null()]),
    data,
  };
  return opts.withRequestId === false
    ? Type.Object(paging)
    : Type.Object({ request_id: Type.String(), ...paging });
}

/**
 * `next_url` for a paginated answer: the request's own path and query on `publicBaseUrl`, with
 * `page` advanced; null on the last page.
 */
export function nextUrl(
  publicBaseUrl: string,
  req: Pick<FastifyRequest, 'url'>,
  page: number,
  pageSize: number,
  totalCount: number,
): string | null {
  if ((page + 1) * pageSize >= totalCount) return null;
  const u = new URL(req.url, 'http://x');
  u.searchParams.set('page', String(page + 1));
  if (!u.searchParams.has('page_size')) u.searchParams.set('page_size', String(pageSize));
  return `${publicBaseUrl}${u.pathname}${u.search}`;
}

/** Splits a comma-delimited query list parameter, dropping empty items. */
export function commaList(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
