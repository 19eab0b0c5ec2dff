/**
 * The OpenAPI document tells the whole truth (docs/api/errors.md): every operation has a unique
 * `operationId`, a description and tags the document lists; every operation documents the statuses
 * the service really answers for it (checked here by provoking them: 400 with every bad field,
 * 401, 413, 414, 415, 429); the booking schema states the rules the service enforces (patterns,
 * enumerations, cross-field `if`/`then`), and the service applies them with the schema's messages.
 * Redocly and Spectral lint the same document in `.ci/run` (`npm run lint:openapi`).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/auth.js';
import { testApp, newDeveloper, type TestApp } from '../helpers/app.js';
import { clientToken } from '../helpers/auth.js';

type Op = { operationId?: string; description?: string; tags?: string[]; requestBody?: unknown; parameters?: { in: string }[]; responses: Record<string, unknown> };
type Doc = { tags: { name: string }[]; paths: Record<string, Record<string, Op>>; components: { schemas: Record<string, unknown> } };

describe('/openapi.json is complete and true', () => {
  let t: TestApp;
  let doc: Doc;
  let token: string;
  beforeAll(async () => {
    t = await testApp({ RATE_LIMIT_PER_MINUTE: '30' });
    token = await clientToken(t, await newDeveloper(t));
    doc = (await t.app.inject({ url: '/openapi.json', headers: { authorization: 'Bearer test-admin-token-0123456789abcdefgh' } })).json();
  });
  afterAll(async () => t?.close());

  const operations = () => Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, path, op })));

  it('every operation has a unique operationId, a description and listed tags', () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(40);
    const tagNames = new Set(doc.tags.map((x) => x.name));
    const ids = new Set<string>();
    for (const { key, op } of ops) {
      expect(op.operationId, `${key} operationId`).toMatch(/^[a-z][A-Za-z]+$/);
      expect(ids.has(op.operationId!), `${key}: ${op.operationId} is unique`).toBe(false);
      ids.add(op.operationId!);
      expect(op.description?.length ?? 0, `${key} description`).toBeGreaterThan(20);
      for (const tag of op.tags ?? []) expect(tagNames.has(tag), `${key} tag ${tag} is listed`).toBe(true);
    }
  });

  it('every API operation documents 400, 401, 429 and 503; with a body 413 and 415; with path parameters 414', () => {
    for (const { key, path, op } of operations()) {
      if (path.startsWith('/auth/')) continue;
      const statuses = Object.keys(op.responses);
      expect(statuses, key).toEqual(expect.arrayContaining(['401', '429', '503']));
      if (op.requestBody || op.parameters?.length) expect(statuses, key).toContain('400');
      if (op.requestBody) expect(statuses, key).toEqual(expect.arrayContaining(['413', '415']));
      if (op.parameters?.some((p) => p.in === 'path')) expect(statuses, key).toContain('414');
    }
  });

  it('the documented statuses are what the service answers', async () => {
    const h = bearer(token);
    expect((await t.app.inject({ url: `/v1/appointments/${'x'.repeat(600)}`, headers: h })).statusCode).toBe(414);
    expect((await t.app.inject({ method: 'POST', url: '/v1/appointments', headers: { ...h, 'content-type': 'text/plain' }, payload: 'hi' })).statusCode).toBe(415);
    expect((await t.app.inject({ method: 'POST', url: '/v1/appointments', headers: { ...h, 'content-type': 'application/json' }, payload: `{"a":"${'x'.repeat(1_100_000)}"}` })).statusCode).toBe(413);
    expect((await t.app.inject({ url: '/v1/appointments' })).statusCode).toBe(401);
    const put = await t.app.inject({ method: 'DELETE', url: '/v1/appointments', headers: h });
    expect(put.statusCode).toBe(405);
    let last = 0;
    for (let i = 0; i < 40 && last !== 429; i++) last = (await t.app.inject({ url: '/v1/specialties', headers: h })).statusCode;
    expect(last).toBe(429);
  });

  it('nothing a user receives cites a file outside the repository: the document, the client\'s sources and README', async () => {
    const outside = /interface\.md|contracts\.md|shared\/spec/;
    expect(JSON.stringify(doc)).not.toMatch(outside);
    const dir = 'clients/typescript/src';
    const files = [...(await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.ts')).map((f) => join(dir, f)), 'clients/typescript/README.md', 'clients/typescript/openapi.json'];
    for (const f of files) expect(await readFile(f, 'utf8'), f).not.toMatch(outside);
  });

  it('the booking schema states the rules the service enforces, and the service answers with its messages', async () => {
    const patient = (JSON.stringify(doc.paths['/v1/appointments']!.post!.requestBody));
    for (const rule of ['^[2-9][0-9]{2}[2-9][0-9]{6}$', '^[0-9]{5}$', '"uniqueItems":true', '"if":', '"then":', '"else":', '"format":"date"', '"WY"']) {
      expect(patient, rule).toContain(rule);
    }
    // Cross-field rules of cancel and the operator move, and date formats of the calendar and availability.
    expect(JSON.stringify(doc.paths['/v1/appointments/cancel']!.post!.requestBody)).toContain('"x-error-field":"cancellation_reason"');
    expect(JSON.stringify(doc.paths['/admin/v1/appointments/{appointment_id}/transition']!.post!.requestBody)).toContain('"then":');
    for (const path of ['/v1/providers/{provider_id}/calendar/timeslots', '/v1/provider_locations/availability']) {
      expect(JSON.stringify(doc.paths[path]!.get!.parameters), path).toContain('"format":"date"');
    }
    // A second developer: the first one's rate limit was spent by the 429 check.
    const h = bearer(await clientToken(t, await newDeveloper(t, 'Second developer')));
    const cancel = await t.app.inject({ method: 'POST', url: '/v1/appointments/cancel', headers: h, payload: { appointment_id: 'x', cancellation_reason: 'moved away' } });
    expect(cancel.json().errors).toEqual([{ field: 'cancellation_reason', message: expect.stringContaining('other_patient_reason') }]);
  });
});
