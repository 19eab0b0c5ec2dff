/**
 * Reading a developer's request log (docs/api/request-log.md): newest first, by page, searchable by
 * `request_id` and filtered by status class.
 */
import type { Kysely } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import { invalidFields } from '../errors.js';

export interface RequestLogItem {
  request_id: string;
  at: string;
  method: string;
  path: string;
  status: number;
  latency_ms: number;
  client_id: string;
  /** The error body of a refused call (docs/api/errors.md); null for a success. */
  error: Record<string, unknown> | null;
}

export interface RequestLogQuery {
  request_id?: string;
  /** `success` (status < 400), `error` (≥ 400), or one status code. */
  status?: string;
  /** The `next_cursor` of the page before. */
  cursor?: string;
  page_size?: number;
}

const encodeCursor = (at: Date, id: string): string => Buffer.from(`${at.toISOString()}|${id}`).toString('base64url');
function decodeCursor(cursor: string): { at: Date; id: string } | undefined {
  const [at, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const date = at ? new Date(at) : undefined;
  return date && !Number.isNaN(date.getTime()) && id && /^\d+$/.test(id) ? { at: date, id } : undefined;
}

/** One page of the request log of `developerId` in `env`, newest first. */
export async function readRequestLog(
  db: Kysely<Database>,
  env: Env,
  developerId: string,
  q: RequestLogQuery,
): Promise<{ requests: RequestLogItem[]; next_cursor: string | null }> {
  const size = q.page_size ?? 50;
  const cursor = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined;
  const errors = [];
  if (q.cursor !== undefined && !cursor) errors.push({ field: 'cursor', message: 'is not a cursor this API gave' });
  if (q.status !== undefined && !/^(success|error|[1-5]\d\d)$/.test(q.status)) errors.push({ field: 'status', message: 'must be success, error or a status code' });
  if (errors.length) throw invalidFields(errors);
  let query = db
    .selectFrom('request_log')
    .select(['id', 'request_id', 'at', 'method', 'path', 'status', 'latency_ms', 'client_id', 'error'])
    .where('env', '=', env)
    .where('developer_id', '=', developerId);
  if (q.request_id !== undefined) query = query.where('request_id', '=', q.request_id);
  if (q.status === 'success') query = query.where('status', '<', 400);
  else if (q.status === 'error') query = query.where('status', '>=', 400);
  else if (q.status !== undefined) query = query.where('status', '=', Number(q.status));
  if (cursor) query = query.where((eb) => eb.or([eb('at', '<', cursor.at), eb.and([eb('at', '=', cursor.at), eb('id', '<', cursor.id)])]));
  const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(size + 1).execute();
  const page = rows.slice(0, size);
  const last = page[page.length - 1];
  return {
    requests: page.map((r) => ({
      request_id: r.request_id,
      at: new Date(r.at).toISOString(),
      method: r.method,
      path: r.path,
      status: r.status,
      latency_ms: Math.round(r.latency_ms * 10) / 10,
      client_id: r.client_id,
      error: (r.error ?? null) as Record<string, unknown> | null,
    })),
    next_cursor: rows.length > size && last ? encodeCursor(new Date(last.at), String(last.id)) : null,
  };
}
