/**
 * Hostile input (issue #6 §4): property-based requests generated from the running app's own
 * OpenAPI document, over every operation it lists. Malformed JSON, wrong content types, huge bodies
 * and query strings, deep nesting, `__proto__`/`constructor` keys, odd Unicode and wrong types.
 * Whatever comes in: never a 5xx, never a hang, and every /v1 and /admin/v1 error is the error body
 * (docs/api/errors.md#error-body) with `request_id` equal to the `x-request-id` header (docs/api/errors.md#error-body). The sign-in page's form
 * posts, which the document does not list, are fuzzed too.
 */
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { ensureSandboxFixtures } from '../../src/domain/directory/sandbox-fixtures.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { createBody, nyDate, PL, schedulingDirectory } from '../appointments/fixtures.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { anonymousToken, bearer, clientToken, userToken } from '../helpers/auth.js';
import { scaled } from '../helpers/scale.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const HANG_MS = scaled(10_000);

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  required?: string[];
  maxLength?: number;
}
interface Parameter {
  in: 'query' | 'path' | 'header' | 'cookie';
  name: string;
  schema?: Schema;
}
interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body?: { types: string[]; schema?: Schema };
}

// ---------------------------------------------------------------- hostile values

const oddStrings = [
  '', ' ', '\u0000', '\uD800', '\uDFFF\uD800', '\uFEFF', '\u202E', 'e\u0301\u0301\u0301', '𝕏😀', '\u2028\u2029',
  '../../../etc/passwd', "' OR 1=1 --", '"; DROP TABLE appointments; --', '<script>alert(1)</script>', '%00', '%zz',
  '\\u0000', 'NaN', 'Infinity', '-1', '1e309', '0x10', '9007199254740993', '__proto__', 'constructor', 'prototype',
  'null', 'true', '[]', '{}', '2024-02-30', '2024-13-01T25:61:00Z', '9999-12-31', '0000-01-01', 'pr_ny|lo_ny', 'a|b|c',
  '|', '||||', 'ＡＢＣ', 'İıßẞ', 'x'.repeat(5000),
];

const oddString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...oddStrings) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 200_000 }).map((n) => 'é'.repeat(n)) },
);

const scalar = fc.oneof(
  oddString,
  fc.integer(),
  fc.constantFrom(0, -1, 1e308, -1e308, 2 ** 53 + 1, 0.5, -0),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
);

/** A value of any type, nested, with prototype-pollution keys among the ordinary ones. */
const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'), oddString), tie('value'), { maxKeys: 5 }),
})).value;

/** Deeply nested JSON text (arrays or objects), as a string: stack depth attacks. */
const deepJson = fc.tuple(fc.integer({ min: 1000, max: 100_000 }), fc.boolean()).map(([n, arr]) =>
  arr ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n),
);

/** A value for a schema: usually one of the schema's own type (so validation passes and handlers run), else anything. */
function valueFor(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 3) return anyValue;
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants?.length) return fc.oneof(...variants.map((s) => valueFor(s, depth + 1)));
  if (schema.enum?.length) return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...schema.enum) }, { weight: 1, arbitrary: anyValue });
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  let own: fc.Arbitrary<unknown>;
  switch (type) {
    case 'object':
      own = objectFor(schema, depth);
      break;
    case 'array':
      own = fc.array(valueFor(schema.items, depth + 1), { maxLength: 4 });
      break;
    case 'integer':
      own = fc.oneof(fc.integer({ min: -5, max: 100 }), fc.integer());
      break;
    case 'number':
      own = fc.oneof(fc.integer({ min: -5, max: 100 }), fc.double({ noNaN: true }));
      break;
    case 'boolean':
      own = fc.boolean();
      break;
    default:
      own = oddString;
  }
  return fc.oneof({ weight: 3, arbitrary: own }, { weight: 1, arbitrary: anyValue });
}

function objectFor(schema: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const props = Object.entries(schema.properties ?? {});
  const known = fc.record(Object.fromEntries(props.map(([k, s]) => [k, valueFor(s, depth + 1)])), { requiredKeys: [] });
  const extra = fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'prototype', 'developer_id', 'appointment_status', 'env'), anyValue, { maxKeys: 3 });
  return fc.tuple(known, extra).map(([k, x]) => {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(k)) out[key] = v;
    // defineProperty, so that `__proto__` becomes an own key (and is serialised) rather than a prototype.
    for (const [key, v] of Object.entries(x)) Object.defineProperty(out, key, { value: v, enumerable: true, configurable: true, writable: true });
    return out;
  });
}

/** encodeURIComponent, but a lone surrogate becomes its (invalid) raw UTF-8 escape instead of throwing. */
function encodeSegment(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80';
  }
}

function queryValue(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v) ?? '';
}

// ---------------------------------------------------------------- request generation

type Body = { payload?: string | Buffer; contentType?: string };

function bodyFor(op: Operation): fc.Arbitrary<Body> {
  const jsonOf = op.body?.schema ? valueFor(op.body.schema) : anyValue;
  const multipart = fc.tuple(oddString, fc.uint8Array({ maxLength: 64 }), fc.constantFrom('b', 'x'.repeat(200), '', '"q"'), fc.boolean()).map(([name, bytes, boundary, closed]) => ({
    contentType: `multipart/form-data; boundary=${boundary}`,
    payload: Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name.replace(/[\r\n"]/g, '')}"\r\nContent-Type: application/pdf\r\n\r\n`),
      Buffer.from(bytes),
      closed ? Buffer.from(`\r\n--${boundary}--\r\n`) : Buffer.alloc(0),
    ]),
  }));
  return fc.oneof(
    { weight: 6, arbitrary: jsonOf.map((v) => ({ payload: JSON.stringify(v) ?? 'null', contentType: 'application/json' })) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom('{', '{"a":', '[1,2', '{"a":1}}', 'nul', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}', '\uFEFF{}', '{"a":"\\ud800"}', '{"a":1,"a":2}', '1', '"s"', 'null', '[]')
        .map((payload) => ({ payload, contentType: 'application/json' })),
    },
    { weight: 1, arbitrary: deepJson.map((payload) => ({ payload, contentType: 'application/json' })) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1_100_000, max: 3_000_000 }).map((n) => ({ payload: `{"a":"${'x'.repeat(n)}"}`, contentType: 'application/json' })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom('text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'image/png', 'application/octet-stream', '*/*', 'application/', ';;;', 'application/jsonx'), anyValue)
        .map(([contentType, v]) => ({ contentType, payload: JSON.stringify(v) ?? 'x' })),
    },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => ({ payload: Buffer.from(b), contentType: 'application/json' })) },
    { weight: op.body?.types.includes('multipart/form-data') ? 4 : 1, arbitrary: multipart },
    { weight: 1, arbitrary: fc.constant({}) },
  );
}

function queryFor(op: Operation): fc.Arbitrary<string> {
  const params = op.parameters.filter((p) => p.in === 'query');
  const pairs = fc.tuple(
    fc.record(Object.fromEntries(params.map((p) => [p.name, fc.oneof(valueFor(p.schema).map(queryValue), fc.array(oddString, { minLength: 2, maxLength: 3 }))])), { requiredKeys: [] }),
    fc.dictionary(fc.constantFrom('__proto__', 'constructor', '__proto__[polluted]', 'a[b][c]', 'page_size', 'page'), oddString, { maxKeys: 2 }),
  );
  return fc.oneof(
    { weight: 8, arbitrary: pairs.map(([known, extra]) => {
      const q = new URLSearchParams();
      for (const [k, v] of [...Object.entries(known), ...Object.entries(extra)]) for (const one of [v].flat()) q.append(k, String(one));
      return q.toString();
    }) },
    // A huge query string, and raw, badly escaped ones.
    { weight: 1, arbitrary: fc.integer({ min: 10_000, max: 200_000 }).map((n) => `${params[0]?.name ?? 'q'}=${'a'.repeat(n)}`) },
    { weight: 1, arbitrary: fc.constantFrom('%', '%ZZ=1', 'a=%E0%A4%A', '&&&==&', 'page=1&page=2&page=x', '=x', 'a=\u0000') },
  );
}

function pathFor(op: Operation, ids: Record<string, string[]>): fc.Arbitrary<string> {
  const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const seg = (name: string) =>
    fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom(...(ids[name] ?? ['x'])).map(encodeSegment) },
      { weight: 3, arbitrary: oddString.map((s) => encodeSegment(s.slice(0, 600)) || '%20') },
      { weight: 1, arbitrary: fc.constantFrom('%', '%ZZ', '..', '%2e%2e%2f', '%00', 'a%2Fb', '%C0%AF', '%E2%80%AE') },
    );
  return fc.tuple(...names.map(seg)).map((values) => names.reduce((p, n, i) => p.replace(`{${n}}`, values[i]!), op.path));
}

// ---------------------------------------------------------------- the test

describe('fuzzing every operation of /openapi.json', () => {
  let t: TestApp;
  let dev: NewDeveloper;
  let auth: fc.Arbitrary<Record<string, string>>;
  const ops: Operation[] = [];
  const ids: Record<string, string[]> = {
    provider_location_id: [PL.ny, PL.manual, 'pr_pending|lo_pending'],
    provider_id: ['pr_ny', 'pr_man'],
    specialty_id: ['sp_t'],
    visit_reason_id: ['pc_t30'],
    insurance_plan_id: ['ip_t'],
    facility_id: ['lo_ny'],
  };

  beforeAll(async () => {
    t = await testApp({ RATE_LIMIT_PER_MINUTE: '1000000' });
    dev = await newDeveloper(t, 'Fuzz dev');
    await t.db.transaction().execute(async (trx) => {
      await writeDirectory(trx, 'sandbox', schedulingDirectory(), { developerId: dev.developer_id });
      await ensureSandboxFixtures(trx);
    });
    const machine = await clientToken(t, dev);
    const user = await userToken(t, dev, { email: 'fuzz@example.org', password: 'correct horse battery staple' });
    const anon = await anonymousToken(t, dev);
    // One real appointment, so appointment paths reach their handlers.
    const booked = await t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(machine), payload: createBody(PL.ny, `${nyDate(3)}T10:00:00-04:00`) });
    const appointmentIds = booked.statusCode < 300 ? [booked.json().data.appointment_id as string] : [];
    ids.appointment_id = [...appointmentIds, 'ap_missing'];
    ids.attachment_id = ['at_missing'];
    ids.developer_id = [dev.developer_id];
    auth = fc.oneof(
      { weight: 6, arbitrary: fc.constant(bearer(machine)) },
      { weight: 2, arbitrary: fc.constant(bearer(user)) },
      { weight: 1, arbitrary: fc.constant(bearer(anon)) },
      { weight: 2, arbitrary: fc.constant({ authorization: 'Bearer test-admin-token-0123456789abcdefgh' }) },
      { weight: 1, arbitrary: fc.constant({}) },
      { weight: 1, arbitrary: oddString.map((s) => ({ authorization: `Bearer ${s.replace(/[^\x20-\x7e]/g, '')}` })) },
      { weight: 1, arbitrary: fc.constantFrom({ authorization: 'Basic Zm9vOmJhcg==' }, { authorization: 'Bearer a.b.c' }, { authorization: `Bearer ${machine}x` }, { authorization: 'Bearer' }) },
    );

    const doc = t.app.swagger() as { paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema?: Schema }> } }>> };
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const content = op.requestBody?.content;
        ops.push({
          method: method.toUpperCase(),
          path,
          parameters: op.parameters ?? [],
          ...(content ? { body: { types: Object.keys(content), schema: Object.values(content)[0]?.schema } } : {}),
        });
      }
    }
  }, scaled(120_000));
  afterAll(async () => t?.close());

  it('lists every area of the service', () => {
    const paths = ops.map((o) => `${o.method} ${o.path}`);
    expect(paths.length).toBeGreaterThan(40);
    for (const p of ['POST /v1/appointments', 'GET /v1/provider_locations/availability', 'POST /v1/appointments/{appointment_id}/attachments', 'POST /auth/oauth/token', 'POST /admin/v1/directory/import', 'GET /v1-beta/facilities']) {
      expect(paths).toContain(p);
    }
  });

  it('answers every generated request of every operation without a 5xx, in time, with the error body for /v1 and admin errors', async () => {
    const failures: string[] = [];
    for (const op of ops) {
      const hasBody = !['GET', 'HEAD', 'DELETE'].includes(op.method);
      const request = fc.record({
        path: pathFor(op, ids),
        query: queryFor(op),
        body: hasBody ? bodyFor(op) : fc.constant<Body>({}),
        headers: auth,
        requestId: fc.oneof(fc.constant(undefined), fc.constantFrom('abc-123', 'bad id\u0000', 'x'.repeat(300), '<script>')),
      });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const url = r.query ? `${r.path}?${r.query}` : r.path;
          const headers: Record<string, string> = { ...r.headers };
          if (r.body.contentType) headers['content-type'] = r.body.contentType;
          if (r.requestId !== undefined) headers['x-request-id'] = r.requestId.replace(/[^\x20-\x7e]/g, '?');
          const options: InjectOptions = { method: op.method as InjectOptions['method'], url, headers, ...(r.body.payload !== undefined ? { payload: r.body.payload } : {}) };
          let timer: NodeJS.Timeout | undefined;
          const res = await Promise.race([
            t.app.inject(options),
            new Promise<never>((_, reject) => {
              timer = setTimeout(() => reject(new Error(`hang: ${op.method} ${url.slice(0, 200)}`)), HANG_MS);
            }),
          ]).finally(() => clearTimeout(timer));
          const where = `${op.method} ${url.slice(0, 160)} [${r.body.contentType ?? '-'}; ${String(r.body.payload ?? '').slice(0, 120)}]`.replace(/(%C3%A9)+/g, '%C3%A9…');
          if (res.statusCode >= 500) {
            failures.push(`${res.statusCode} ${where}: ${res.body.slice(0, 300)}`);
            return false;
          }
          if (res.statusCode >= 400 && /^\/(v1|v1-beta|admin\/v1)\//.test(op.path)) {
            let body: { request_id?: unknown; error_type?: unknown; errors?: { message?: unknown }[] };
            try {
              body = res.json();
            } catch {
              failures.push(`non-JSON ${res.statusCode} ${where}`);
              return false;
            }
            const ok =
              typeof body.request_id === 'string' &&
              body.request_id === res.headers['x-request-id'] &&
              (body.error_type === 'api_error' || body.error_type === 'invalid_request') &&
              Array.isArray(body.errors) &&
              body.errors.length > 0 &&
              body.errors.every((e) => typeof e.message === 'string');
            if (!ok) {
              failures.push(`bad error body ${res.statusCode} ${where}: ${res.body.slice(0, 200)}`);
              return false;
            }
          }
          return true;
        }),
        { numRuns: RUNS, endOnFailure: true },
      ).catch((e: Error) => {
        failures.push(`${op.method} ${op.path}: ${e.message.split('\n')[0]!.slice(0, 300)}`);
      });
    }
    expect(failures).toEqual([]);
  }, scaled(300_000));
  it('answers hostile posts to the sign-in forms (not in the document) without a 5xx or a hang', async () => {
    const failures: string[] = [];
    const field = fc.oneof(oddString, fc.constantFrom('fuzz@example.org', 'correct horse battery staple', 'approve', 'deny'));
    const form = fc.dictionary(
      fc.constantFrom('request', 'email', 'password', 'csrf', 'decision', 'name', 'given_name', '__proto__', 'constructor', 'request[]'),
      field,
      { maxKeys: 6 },
    );
    const post = fc.record({
      path: fc.constantFrom('/auth/authorize/signin', '/auth/authorize/signup', '/auth/authorize/decision', '/auth/authorize/signout'),
      query: fc.oneof(fc.constant(''), oddString.map((q) => `?request=${encodeURIComponent(q.replace(/[\uD800-\uDFFF]/g, "?"))}`)),
      body: fc.oneof(
        form.map((f) => ({ type: 'application/x-www-form-urlencoded', payload: new URLSearchParams(f as Record<string, string>).toString() })),
        oddString.map((x) => ({ type: 'application/x-www-form-urlencoded', payload: x })),
        form.map((f) => ({ type: 'application/json', payload: JSON.stringify(f) })),
        fc.constant({ type: 'multipart/form-data; boundary=x', payload: '--x\r\nbroken' }),
      ),
      origin: fc.constantFrom(undefined, 'http://127.0.0.1', 'null', 'https://evil.example'),
    });
    await fc.assert(
      fc.asyncProperty(post, async (r) => {
        const headers: Record<string, string> = { 'content-type': r.body.type };
        if (r.origin) headers.origin = r.origin;
        let timer: NodeJS.Timeout | undefined;
        const res = await Promise.race([
          t.app.inject({ method: 'POST', url: `${r.path}${r.query}`, headers, payload: r.body.payload }),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`hang: POST ${r.path}`)), HANG_MS);
          }),
        ]).finally(() => clearTimeout(timer));
        if (res.statusCode >= 500) failures.push(`${res.statusCode} POST ${r.path}${r.query.slice(0, 80)} [${r.body.type}; ${r.body.payload.slice(0, 120)}]: ${res.body.slice(0, 200)}`);
        return res.statusCode < 500;
      }),
      { numRuns: RUNS * 8, endOnFailure: true },
    ).catch((e: Error) => failures.push(e.message.split('\n')[0]!.slice(0, 300)));
    expect(failures).toEqual([]);
  }, scaled(300_000));
});
