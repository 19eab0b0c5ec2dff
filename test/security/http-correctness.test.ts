/**
 * HTTP details a strict client relies on: 405 with `Allow` for a known path under another method
 * (RFC 9110 §15.5.6), the bearer challenge without an error code when no token is sent (RFC 6750
 * §3.1), and a Content-Type on every JSON answer, the hand-serialised entities page included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';

describe(`HTTP correctness (${engineName})`, () => {
  let t: TestApp;
  let dev: NewDeveloper;
  let token: string;
  beforeAll(async () => {
    t = await testApp();
    dev = await newDeveloper(t, 'Strict client');
    token = await clientToken(t, dev);
  });
  afterAll(async () => t.close());

  it('answers 405 with Allow and the error body for a known path under an unsupported method', async () => {
    const cases: [string, string, string[]][] = [
      ['DELETE', '/v1/appointments', ['GET', 'HEAD', 'POST']],
      ['PATCH', '/v1/appointments/3f1c2a52-8f0e-4d7b-9a51-2f4f5f0b1c11', ['GET', 'HEAD']],
      ['POST', '/v1/schedulable_entities', ['GET', 'HEAD']],
      // GET would reach the single read (its id segment matches `confirm`), so it is allowed too.
      ['PUT', '/v1/appointments/confirm', ['GET', 'HEAD', 'POST']],
      ['DELETE', '/v1/providers/pr_1/calendar/timeslots', ['GET', 'HEAD', 'PUT']],
    ];
    for (const [method, url, allow] of cases) {
      const res = await t.app.inject({ method: method as 'GET', url, headers: bearer(token) });
      expect(res.statusCode, `${method} ${url}`).toBe(405);
      expect(res.headers.allow, `${method} ${url}`).toBe(allow.join(', '));
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({ request_id: res.headers['x-request-id'], error_type: 'invalid_request', errors: [{ message: expect.stringContaining(method) }] });
    }
  });

  it('keeps 404 for a path no route serves', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: '/v1/no-such-thing', headers: bearer(token) });
    expect(res.statusCode).toBe(404);
    expect(res.headers.allow).toBeUndefined();
  });

  it('challenges a request without any token with a bare Bearer, and a bad token with invalid_token', async () => {
    const none = await t.app.inject({ url: '/v1/appointments' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="carebook"');
    const bad = await t.app.inject({ url: '/v1/appointments', headers: bearer('not.a.token') });
    expect(bad.statusCode).toBe(401);
    expect(bad.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
  });

  it('answers the schedulable entities page with a JSON Content-Type', async () => {
    const res = await t.app.inject({ url: '/v1/schedulable_entities?page_size=2', headers: bearer(token) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json().data.schedulable_entities).toEqual(expect.any(Array));
  });
});
