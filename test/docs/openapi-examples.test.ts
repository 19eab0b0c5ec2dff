/**
 * The `/docs` reference is complete: every operation of `/openapi.json` has a summary, an example
 * for its success response and for its request body, and every JSON example matches its schema.
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.js';

type Media = { schema?: unknown; example?: unknown; examples?: Record<string, { value: unknown }> };
type Op = { summary?: string; requestBody?: { content: Record<string, Media> }; responses: Record<string, { content?: Record<string, Media> }> };

describe('/openapi.json examples', () => {
  let t: TestApp;
  let doc: { paths: Record<string, Record<string, Op>> };
  beforeAll(async () => {
    t = await testApp();
    doc = (await t.app.inject({ url: '/openapi.json' })).json();
  });
  afterAll(async () => t?.close());

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([m]) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
        .map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
    );
  const examplesOf = (m: Media): unknown[] => [...(m.example !== undefined ? [m.example] : []), ...Object.values(m.examples ?? {}).map((e) => e.value)];

  it('every operation has a summary, a success-response example and a request-body example', () => {
    const missing: string[] = [];
    const ops = operations();
    expect(ops.length).toBeGreaterThan(30);
    for (const { name, op } of ops) {
      if (!op.summary?.trim()) missing.push(`${name}: summary`);
      const success = Object.keys(op.responses).filter((s) => /^2\d\d$/.test(s));
      if (!success.length) missing.push(`${name}: success response`);
      for (const status of success) {
        const content = Object.values(op.responses[status]!.content ?? {});
        if (!content.length || content.some((m) => !examplesOf(m).length)) missing.push(`${name}: ${status} example`);
      }
      for (const [type, m] of Object.entries(op.requestBody?.content ?? {})) if (!examplesOf(m).length) missing.push(`${name}: ${type} request example`);
    }
    expect(missing).toEqual([]);
  });

  it('every JSON example matches its schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    (addFormats as unknown as (a: Ajv) => void)(ajv);
    const wrong: string[] = [];
    for (const { name, op } of operations()) {
      const media = [
        ...Object.entries(op.requestBody?.content ?? {}).map(([type, m]) => ({ where: `request ${type}`, type, m })),
        ...Object.entries(op.responses).flatMap(([status, r]) => Object.entries(r.content ?? {}).map(([type, m]) => ({ where: `${status} ${type}`, type, m }))),
      ];
      for (const { where, type, m } of media) {
        if (!type.includes('json') || !m.schema) continue;
        const validate = ajv.compile(m.schema as object);
        for (const ex of examplesOf(m)) if (!validate(ex)) wrong.push(`${name} ${where}: ${ajv.errorsText(validate.errors)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('query parameters with a default are optional', () => {
    const required = operations().flatMap(({ name, op }) =>
      ((op as { parameters?: { name: string; in: string; required?: boolean; schema?: { default?: unknown } }[] }).parameters ?? [])
        .filter((p) => p.in === 'query' && p.required && p.schema?.default !== undefined)
        .map((p) => `${name} ${p.name}`),
    );
    expect(required).toEqual([]);
  });
});
