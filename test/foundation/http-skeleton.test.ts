import { Writable } from 'node:stream';
import { request } from 'node:http';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { DatabaseHandle } from '../../src/db/database.js';
import { buildApp } from '../../src/http/app.js';
import { loggerOptions } from '../../src/http/logger.js';
import { freshDatabase } from '../helpers/db.js';
import { TEST_KEY_ENCRYPTION_KEY, testPort } from '../helpers/app.js';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { sql } from 'kysely';

describe('HTTP skeleton: error model, health, docs, logs, shutdown', () => {
  let h: DatabaseHandle;
  let app: FastifyInstance;
  const logLines: string[] = [];
  const port = testPort();

  beforeAll(async () => {
    h = await freshDatabase();
    const sink = new Writable({ write(chunk, _enc, cb) { logLines.push(String(chunk)); cb(); } });
    const config = loadConfig({ PORT: String(port), ADMIN_TOKEN: 'admin-secret', KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY });
    app = await buildApp({ config, db: h.db, logger: pino(loggerOptions('info'), sink) });
    app.get('/v1/_boom', async () => {
      throw new Error('boom for patient Jane Roe');
    });
    // A bug whose message quotes patient data over several lines (as a database error quoting a row would).
    app.get('/v1/_boom_multiline', async () => {
      const e = new TypeError('cannot book for Zelda Quux\nborn 1961-04-12, phone +1 212 555 0199');
      (e as { code?: string }).code = 'E_TEST';
      throw e;
    });
    // A value PostgreSQL cannot read as the column's type: the client's error, not a 500.
    app.get('/v1/_bad_value/:kind', async (req) => {
      const kind = (req.params as { kind: string }).kind;
      const cast = kind === 'int' ? sql`SELECT ${'Jane Roe'}::integer` : kind === 'date' ? sql`SELECT ${'Jane Roe'}::timestamptz` : sql`SELECT ${'2024-02-30 10:00'}::timestamp`;
      return (await cast.execute(h.db)).rows;
    });
    app.get('/v1/_slow', async () => {
      await new Promise((r) => setTimeout(r, 300));
      return { ok: true };
    });
    // A route with every part validated, to see errors of all of them reported together.
    app.post(
      '/v1/_parts/:item_id',
      {
        schema: {
          params: Type.Object({ item_id: Type.String({ pattern: '^it_' }) }),
          querystring: Type.Object({ page_size: Type.Integer({ minimum: 1, maximum: 100 }), sort: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])) }),
          body: Type.Object({ name: Type.String(), count: Type.Integer() }, { additionalProperties: false }),
        },
      },
      async () => ({ ok: true }),
    );
    app.post('/v1/_echo', async (req) => {
      req.log.info({ patient: { first_name: 'Zebediah' }, email_address: 'zeb@example.org' }, 'handled');
      return { ok: true };
    });
  });
  afterAll(async () => {
    await app.close();
    await h.close();
  });

  it('answers an unknown route with the error body and request_id equal to x-request-id', async () => {
    const res = await app.inject({ url: '/v1/does-not-exist' });
    expect(res.statusCode).toBe(404);
    const body = res.json();
    expect(body).toEqual({ request_id: res.headers['x-request-id'], error_type: 'invalid_request', errors: [{ message: expect.any(String) }] });
  });

  it('keeps a safe caller-supplied x-request-id and replaces an unsafe one', async () => {
    expect((await app.inject({ url: '/healthz', headers: { 'x-request-id': 'trace-42' } })).headers['x-request-id']).toBe('trace-42');
    expect((await app.inject({ url: '/healthz', headers: { 'x-request-id': 'bad id\n' } })).headers['x-request-id']).toMatch(/^req_/);
  });

  it('names every bad field, not only the first', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/admin/v1/users',
      headers: { authorization: 'Bearer admin-secret' },
      payload: { email: 5, role: 'doctor' },
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.error_type).toBe('invalid_request');
    expect(body.request_id).toBe(res.headers['x-request-id']);
    const fields = body.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['email', 'password', 'role']));
  });

  it('names every bad field across path, query and body in one error list', async () => {
    const fields = async (url: string, payload: unknown) => {
      const res = await app.inject({ method: 'POST', url, payload: payload as object });
      expect(res.statusCode).toBe(400);
      expect(res.json().error_type).toBe('invalid_request');
      return (res.json().errors as { field?: string }[]).map((e) => e.field);
    };
    // Query and body both bad (Fastify validates the body first, then stops).
    expect(await fields('/v1/_parts/it_1?page_size=500&sort=up', { name: 7, extra: true })).toEqual(
      expect.arrayContaining(['page_size', 'sort', 'name', 'count', 'extra']),
    );
    // Path, query and body all bad; path first, then query, then body.
    const all = await fields('/v1/_parts/x?page_size=zero', { count: 'many' });
    expect(all).toEqual(['item_id', 'page_size', 'name', 'count']);
    // Only the query bad: only the query is reported.
    expect(await fields('/v1/_parts/it_1', { name: 'a', count: 1 })).toEqual(['page_size']);
    expect((await app.inject({ method: 'POST', url: '/v1/_parts/it_1?page_size=5', payload: { name: 'a', count: 1 } })).statusCode).toBe(200);
  });

  it('answers malformed JSON with 400 and a wrong content type with 415, both with the error body', async () => {
    const bad = await app.inject({ method: 'POST', url: '/admin/v1/users', headers: { authorization: 'Bearer admin-secret', 'content-type': 'application/json' }, payload: '{"email":' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].message).toMatch(/JSON/);
    const wrongType = await app.inject({ method: 'POST', url: '/admin/v1/users', headers: { authorization: 'Bearer admin-secret', 'content-type': 'text/csv' }, payload: 'a,b' });
    expect(wrongType.statusCode).toBe(415);
    expect(wrongType.json().error_type).toBe('invalid_request');
  });

  it('answers a thrown bug with a bare 500: no stack, no message, no patient data', async () => {
    const res = await app.inject({ url: '/v1/_boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ request_id: res.headers['x-request-id'], error_type: 'api_error', errors: [{ message: 'internal error' }] });
    expect(res.body).not.toContain('Jane');
    expect(res.body).not.toContain('at ');
  });

  it('keeps patient data and query values out of the logs', async () => {
    logLines.length = 0;
    await app.inject({ method: 'POST', url: '/v1/_echo?developer_patient_id=PAT-SECRET-9', payload: { first_name: 'Zebediah' } });
    const text = logLines.join('');
    expect(text).toContain('handled');
    expect(text).toContain('developer_patient_id');
    expect(text).not.toContain('PAT-SECRET-9');
    expect(text).not.toContain('Zebediah');
    expect(text).not.toContain('zeb@example.org');
  });

  it('logs a 500 by error name, code and stack frames, never its message', async () => {
    logLines.length = 0;
    expect((await app.inject({ url: '/v1/_boom' })).statusCode).toBe(500);
    expect((await app.inject({ url: '/v1/_boom_multiline' })).statusCode).toBe(500);
    const entries = logLines.map((l) => JSON.parse(l) as { msg?: string; err?: { name?: string; code?: string; stack?: string } }).filter((e) => e.msg === 'unhandled error');
    expect(entries.map((e) => [e.err?.name, e.err?.code])).toEqual([['Error', undefined], ['TypeError', 'E_TEST']]);
    expect(entries[1]!.err!.stack).toMatch(/^\s+at /);
    const text = logLines.join('');
    for (const secret of ['Jane', 'Roe', 'Zelda', 'Quux', '1961-04-12', '555 0199']) expect(text).not.toContain(secret);
  });

  it('keeps objects a call hands the logger by mistake out of the logs: only named fields are written', async () => {
    logLines.length = 0;
    app.log.info({ appointment: { developer_patient_id: 'PAT-77', sex_at_birth: 'female', gender: ['non_binary'] }, email_address: 'x@example.org', event: 'probe' }, 'redaction probe');
    app.log.error({ err: new Error('patient Jane Roe not found') }, 'raw error probe');
    const [line, errLine] = logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(line).toMatchObject({ msg: 'redaction probe', event: 'probe', dropped: ['appointment', 'email_address'] });
    expect(errLine).toMatchObject({ msg: 'raw error probe', err: { name: 'Error' } });
    const text = logLines.join('');
    for (const secret of ['PAT-77', 'female', 'non_binary', 'x@example.org', 'Jane', 'Roe']) expect(text).not.toContain(secret);
  });

  it('writes one line per request at info: method, URL without query values, status and time', async () => {
    logLines.length = 0;
    const res = await app.inject({ url: '/healthz?probe=PAT-1' });
    const lines = logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines, JSON.stringify(lines)).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'request completed', request_id: res.headers['x-request-id'], req: { method: 'GET', url: '/healthz?probe' }, res: { statusCode: res.statusCode } });
    expect(lines[0]!.responseTime).toEqual(expect.any(Number));
  });

  it("carries the request id on a line a handler writes (the request's logger is made on first use), and only on its own lines", async () => {
    logLines.length = 0;
    const a = await app.inject({ method: 'POST', url: '/v1/_echo', payload: { first_name: 'Ann' } });
    const b = await app.inject({ method: 'POST', url: '/v1/_echo', payload: { first_name: 'Bo' } });
    const lines = logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const ids = (msg: string) => lines.filter((l) => l.msg === msg).map((l) => l.request_id);
    expect(ids('handled')).toEqual([a.headers['x-request-id'], b.headers['x-request-id']]);
    expect(ids('request completed')).toEqual([a.headers['x-request-id'], b.headers['x-request-id']]);
    // Each line names its request once (a child's binding and a field would write it twice).
    for (const l of logLines) expect(l.match(/"request_id"/g)).toHaveLength(1);
  });

  it('answers a value the database cannot read as its type (22P02, 22007, 22008) with a 400 error body, not 500', async () => {
    logLines.length = 0;
    for (const kind of ['int', 'date', 'overflow']) {
      const res = await app.inject({ url: `/v1/_bad_value/${kind}` });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ request_id: res.headers['x-request-id'], error_type: 'invalid_request', errors: [{ message: expect.any(String) }] });
      expect(res.body).not.toContain('Jane');
    }
    expect(logLines.join('')).not.toContain('Jane');
  });

  it('guards the admin API with the admin token', async () => {
    expect((await app.inject({ method: 'POST', url: '/admin/v1/developers', payload: { name: 'x' } })).statusCode).toBe(401);
    const wrong = await app.inject({ method: 'POST', url: '/admin/v1/developers', headers: { authorization: 'Bearer nope' }, payload: { name: 'x' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error_type).toBe('invalid_request');
  });

  it('serves /healthz, /readyz, /metrics, /openapi.json and /docs', async () => {
    expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await app.inject({ url: '/readyz' })).json()).toEqual({ status: 'ok', database: 'ok' });
    const metrics = await app.inject({ url: '/metrics' });
    expect(metrics.headers['content-type']).toContain('text/plain');
    expect(metrics.body).toContain('carebook_http_request_duration_seconds');
    const doc = (await app.inject({ url: '/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/admin/v1/developers');
    expect(doc.paths['/admin/v1/developers'].post.requestBody).toBeDefined();
    const docs = await app.inject({ url: '/docs/' });
    expect([200, 302]).toContain(docs.statusCode);
  });

  it('lets in-flight requests finish on close and does not hang after a refused upload', async () => {
    await app.listen({ port, host: '127.0.0.1' });
    const slow = fetch(`http://127.0.0.1:${port}/v1/_slow`).then((r) => r.status);
    // A body over the limit is refused while the client is still sending.
    const refused = new Promise<number>((resolve) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/admin/v1/users', headers: { 'content-type': 'application/json', 'content-length': String(5 * 1024 * 1024), authorization: 'Bearer admin-secret' } }, (res) => {
        resolve(res.statusCode ?? 0);
        res.resume();
      });
      req.on('error', () => resolve(-1));
      req.write(Buffer.alloc(64 * 1024, 32));
    });
    expect(await refused).toBe(413);
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await app.close();
    expect(await slow).toBe(200);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
